import Foundation
import Synchronization

/// Open event streams per API key on this instance: a leaked or runaway key cannot hold every
/// connection the instance has. Kept in memory like the per-key request rate (each instance
/// counts its own streams; with N instances a key may hold N times as many).
final class StreamSlots: Sendable {
    private let counts: Mutex<Counts>

    init(perKey: Int) {
        self.counts = Mutex(Counts(perKey: perKey))
    }

    /// The open streams by key, as a pure state machine: `take` and `release` say what to do,
    /// and `StreamSlotsTests` drives them without a server.
    struct Counts: Sendable {
        let perKey: Int
        private(set) var open: [[UInt8]: Int] = [:]

        init(perKey: Int) { self.perKey = perKey }

        /// Counts a stream for `key`; false when it holds `perKey` already.
        mutating func take(_ key: [UInt8]) -> Bool {
            guard open[key, default: 0] < perKey else { return false }
            open[key, default: 0] += 1
            return true
        }

        /// A stream of `key` ended.
        mutating func release(_ key: [UInt8]) {
            open[key, default: 1] -= 1
            if open[key] == 0 { open[key] = nil }
        }
    }

    /// Takes a slot for `key`; nil when it holds `perKey` streams already. The slot is given
    /// back when released or, at the latest, when the last reference to it goes (a client gone
    /// before the response's head was written never runs the body that would release it).
    func take(_ key: [UInt8]) -> Slot? {
        counts.withLock { $0.take(key) } ? Slot(slots: self, key: key) : nil
    }

    /// One open stream's place.
    final class Slot: Sendable {
        private let slots: StreamSlots
        private let key: [UInt8]
        private let released = Mutex(false)

        fileprivate init(slots: StreamSlots, key: [UInt8]) {
            self.slots = slots
            self.key = key
        }

        func release() {
            let first: Bool = released.withLock { released in
                defer { released = true }
                return !released
            }
            if first { slots.counts.withLock { $0.release(key) } }
        }

        deinit { release() }
    }
}
