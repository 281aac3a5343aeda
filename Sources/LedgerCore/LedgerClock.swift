import Foundation
import Synchronization

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
public final class ManualClock: LedgerClock {
    private let current: Mutex<Date>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_790_000_000)) {
        self.current = Mutex(start)
    }

    public func now() -> Date {
        current.withLock { $0 }
    }

    /// Moves the clock forward (or backward with a negative interval).
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
