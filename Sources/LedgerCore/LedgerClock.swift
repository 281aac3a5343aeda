import Foundation

/// The source of "now" for everything time-dependent (TTLs, windows, recorded times).
///
/// Injected everywhere so tests move time instead of sleeping.
public protocol LedgerClock: Sendable {
    func now() -> Date
}

/// The wall clock.
public struct SystemClock: LedgerClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to; for tests and replays.
public final class ManualClock: LedgerClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_790_000_000)) {
        self.current = start
    }

    public func now() -> Date {
        lock.withLock { current }
    }

    /// Moves the clock forward (or backward with a negative interval).
    public func advance(by seconds: TimeInterval) {
        lock.withLock { current = current.addingTimeInterval(seconds) }
    }

    public func set(_ date: Date) {
        lock.withLock { current = date }
    }
}
