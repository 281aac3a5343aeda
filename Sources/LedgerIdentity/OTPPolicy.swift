import Foundation

/// The OTP rules (seeds: Enter OTP code; API.md configuration), with the seeds' defaults.
public struct OTPPolicy: Sendable, Equatable {
    /// How long a code is valid.
    public var ttl: TimeInterval = 300
    /// Wrong codes allowed; the last one invalidates the code.
    public var maxAttempts = 5
    /// Resends after the first send, per phone and purpose, per `resendWindow`.
    public var resendLimit = 3
    public var resendWindow: TimeInterval = 900
    /// The "Resend in 0:27" countdown: the least time between two sends for a phone and purpose.
    public var resendInterval: TimeInterval = 30
    /// Codes one client address may request (all numbers together) per `capWindow`.
    public var addressLimit = 30
    /// Codes one account may request (all numbers and purposes together) per `capWindow`.
    public var accountLimit = 10
    public var capWindow: TimeInterval = 900

    public init() {}

    /// The first send and `resendLimit` resends per window.
    public var sendLimit: SlidingWindowLimit { .init(limit: resendLimit + 1, window: resendWindow) }

    /// Seconds until another code may be sent for a phone and purpose that had codes sent at
    /// `previousSends`; nil when one may be sent now.
    public func sendDelay(previousSends: [Date], now: Date) -> Int? {
        var delays = [sendLimit.retryAfter(previousSends, now: now)]
        if let last = previousSends.filter({ $0 <= now }).max(), now < last.addingTimeInterval(resendInterval) {
            delays.append(secondsUntil(last.addingTimeInterval(resendInterval), from: now))
        }
        return delays.compactMap { $0 }.max()
    }
}
