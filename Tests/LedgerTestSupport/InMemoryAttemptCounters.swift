import Foundation
import LedgerAccounts

/// Attempt counters in memory, for fast tests: the same windows and lockouts as the
/// `login_throttle` table's upserts.
public actor InMemoryAttemptCounters: AttemptCounters {
    private struct Counter {
        var count: Int
        var windowStarted: Date
        var lockedUntil: Date?
    }
    private var counters: [String: Counter] = [:]

    public init() {}

    public func count(_ key: String, window: TimeInterval, now: Date) async throws -> AttemptCount {
        var counter = counters[key] ?? Counter(count: 0, windowStarted: now, lockedUntil: nil)
        let over =
            counter.lockedUntil.map { $0 <= now } ?? (counter.windowStarted <= now.addingTimeInterval(-window))
        if over { counter = Counter(count: 0, windowStarted: now, lockedUntil: nil) }
        counter.count += 1
        counters[key] = counter
        return AttemptCount(count: counter.count, windowStarted: counter.windowStarted, lockedUntil: counter.lockedUntil)
    }

    public func lock(_ key: String, reaching limit: Int, for window: TimeInterval, now: Date) async throws -> Date? {
        guard var counter = counters[key], counter.count >= limit, counter.lockedUntil == nil else { return nil }
        counter.lockedUntil = now.addingTimeInterval(window)
        counters[key] = counter
        return counter.lockedUntil
    }

    public func uncount(_ key: String, inWindowStartedAt windowStarted: Date) async throws {
        guard let counter = counters[key], counter.windowStarted == windowStarted else { return }
        counters[key]?.count = max(counter.count - 1, 0)
    }

    public func clear(_ key: String) async throws {
        counters[key] = nil
    }
}
