import Foundation

/// Open event streams per API key on this instance: a leaked or runaway key cannot hold every
/// connection the instance has. Kept in memory like the per-key request rate (each instance
/// counts its own streams; with N instances a key may hold N times as many).
final class StreamSlots: @unchecked Sendable {
    private let lock = NSLock()
    private let perKey: Int
    private var open: [[UInt8]: Int] = [:]

    init(perKey: Int) {
        self.perKey = perKey
    }

    /// Takes a slot for `key`; nil when it holds `perKey` streams already. The slot is given
    /// back when released or, at the latest, when the last reference to it goes (a client gone
    /// before the response's head was written never runs the body that would release it).
    func take(_ key: [UInt8]) -> Slot? {
        let taken: Bool = lock.withLock {
            guard open[key, default: 0] < perKey else { return false }
            open[key, default: 0] += 1
            return true
        }
        return taken ? Slot(slots: self, key: key) : nil
    }

    /// One open stream's place.
    final class Slot: @unchecked Sendable {
        private let slots: StreamSlots
        private let key: [UInt8]
        private let lock = NSLock()
        private var released = false

        fileprivate init(slots: StreamSlots, key: [UInt8]) {
            self.slots = slots
            self.key = key
        }

        func release() {
            let first: Bool = lock.withLock {
                defer { released = true }
                return !released
            }
            if first { slots.release(key) }
        }

        deinit { release() }
    }

    fileprivate func release(_ key: [UInt8]) {
        lock.withLock {
            open[key, default: 1] -= 1
            if open[key] == 0 { open[key] = nil }
        }
    }
}
