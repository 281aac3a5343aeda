import Foundation

/// How often email links of one purpose (verification, reset, change, re-auth) may go to an
/// account: the "Resend link in 0:27" countdown (`interval`), and at most `limit` resends after
/// the first per `window` (`LEDGER_LINK_RESEND_INTERVAL_SECONDS`, `LEDGER_LINK_RESEND_LIMIT`,
/// `LEDGER_LINK_RESEND_WINDOW_SECONDS`).
public struct LinkResendPolicy: Sendable, Equatable {
    public var interval: TimeInterval = 30
    public var limit = 3
    public var window: TimeInterval = 900

    /// The longest `window` and the largest `limit` a configuration may set: an account's
    /// state keeps the send times of this long, at most one more than this many a purpose.
    public static let longestWindow: TimeInterval = 86_400
    public static let largestLimit = 100

    public init(interval: TimeInterval = 30, limit: Int = 3, window: TimeInterval = 900) {
        self.interval = interval
        self.limit = limit
        self.window = window
    }

    /// Seconds until one more link may go after the sends at `times`; nil when one may go now.
    public func retryAfter(_ times: [Date], now: Date) -> Int? {
        SlidingWindowLimit(limit: limit + 1, window: window).retryAfter(times, now: now, minimumInterval: interval)
    }
}

extension AccountState {
    /// Seconds until another link of `purpose` may be sent (`resend_after`): the countdown, or
    /// longer when the window's resends are spent; 0 when one may go now.
    public func linkResendAfter(_ purpose: PendingLink.Purpose, policy: LinkResendPolicy, now: Date) -> Int {
        policy.retryAfter(linkSendTimes[purpose] ?? [], now: now) ?? 0
    }
}
