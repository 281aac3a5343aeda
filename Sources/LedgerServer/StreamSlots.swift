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

    /// Takes a slot for `key`; false when it holds `perKey` streams already.
    func take(_ key: [UInt8]) -> Bool {
        lock.withLock {
            guard open[key, default: 0] < perKey else { return false }
            open[key, default: 0] += 1
            return true
        }
    }

    func release(_ key: [UInt8]) {
        lock.withLock {
            open[key, default: 1] -= 1
            if open[key] == 0 { open[key] = nil }
        }
    }
}
