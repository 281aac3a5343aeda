import Foundation

/// Where attempt counters live: shared by every instance, so a limit holds across them
/// (PostgreSQL's `login_throttle` table in production, memory in tests). Each call is one
/// atomic step: concurrent attempts each see their own count.
public protocol AttemptCounters: Sendable {
    /// Counts one attempt against `key`. A new window starts (count 1) when the key's lockout
    /// has ended or, never locked, `window` seconds have passed since its window began.
    func count(_ key: String, window: TimeInterval, now: Date) async throws -> AttemptCount

    /// Locks `key` until `now + window` when it has counted at least `limit` attempts and is not
    /// locked yet; returns the lockout's end when this call set it.
    func lock(_ key: String, reaching limit: Int, for window: TimeInterval, now: Date) async throws -> Date?

    /// Takes back one attempt counted but not made, when the key's window is still the one
    /// that began at `windowStarted` (a window begun since holds other attempts).
    func uncount(_ key: String, inWindowStartedAt windowStarted: Date) async throws

    /// Forgets the key: its count and its lockout.
    func clear(_ key: String) async throws
}

/// A key's count after an attempt.
public struct AttemptCount: Sendable, Equatable {
    /// Attempts in the current window, this one included.
    public let count: Int
    public let windowStarted: Date
    public let lockedUntil: Date?

    public init(count: Int, windowStarted: Date, lockedUntil: Date?) {
        self.count = count
        self.windowStarted = windowStarted
        self.lockedUntil = lockedUntil
    }
}
