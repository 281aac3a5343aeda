import Foundation

/// At most `limit` occurrences in any `window` seconds, shared by the send limits of links
/// and codes and the per-address and per-account caps.
public struct SlidingWindowLimit: Sendable, Equatable {
    public var limit: Int
    public var window: TimeInterval

    public init(limit: Int, window: TimeInterval) {
        self.limit = limit
        self.window = window
    }

    /// Seconds until one more is allowed after the occurrences at `times`; nil when it is
    /// allowed now. An occurrence stops counting exactly `window` seconds after it happened.
    public func retryAfter(_ times: [Date], now: Date) -> Int? {
        let recent = times.filter { $0 > now.addingTimeInterval(-window) && $0 <= now }.sorted()
        guard recent.count >= limit else { return nil }
        guard limit > 0 else { return secondsUntil(now.addingTimeInterval(window), from: now) }
        return secondsUntil(recent[recent.count - limit].addingTimeInterval(window), from: now)
    }

    /// As `retryAfter(_:now:)`, and also at least `minimumInterval` after the latest occurrence
    /// (the "Resend in 0:27" countdown of codes and links).
    public func retryAfter(_ times: [Date], now: Date, minimumInterval: TimeInterval) -> Int? {
        var delays = [retryAfter(times, now: now)]
        if let last = times.filter({ $0 <= now }).max(), now < last.addingTimeInterval(minimumInterval) {
            delays.append(secondsUntil(last.addingTimeInterval(minimumInterval), from: now))
        }
        return delays.compactMap { $0 }.max()
    }
}

/// Whole seconds from `now` until `date`, at least 1 (a `Retry-After` of 0 invites a retry storm).
public func secondsUntil(_ date: Date, from now: Date) -> Int {
    max(1, Int(date.timeIntervalSince(now).rounded(.up)))
}
