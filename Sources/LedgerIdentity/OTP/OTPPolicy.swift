import Foundation

/// The OTP rules (docs/architecture.md "Phone and OTP"), with the product's defaults.
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
    /// Codes one IPv6 network (its /48: what one customer of a tunnel broker or host gets)
    /// may request per `capWindow`, all its /64s together (`LEDGER_IP_OTP_NETWORK_LIMIT`).
    public var networkLimit = 120
    /// Codes sent without a session (sign-in codes, which anyone may ask for any number) to the
    /// numbers of one country per `regionWindow`, all clients together: the ceiling on what SMS
    /// pumping can bill, whatever addresses it comes from (`LEDGER_OTP_COUNTRY_HOURLY_LIMIT`; 0: none).
    public var regionLimit = 1000
    public var regionWindow: TimeInterval = 3600
    /// The countries codes may be sent to (ISO 3166 codes, `LEDGER_SMS_COUNTRIES`); nil: every
    /// country of the picker.
    public var allowedRegions: Set<String>?
    /// Wrong codes one number may take per `dailyFailureWindow`, all its codes together; then
    /// code requests for it are refused (`LEDGER_OTP_DAILY_FAILURE_LIMIT`).
    public var dailyFailureLimit = 20
    public var dailyFailureWindow: TimeInterval = 86_400

    public init() {}

    /// The first send and `resendLimit` resends per window.
    public var sendLimit: SlidingWindowLimit { .init(limit: resendLimit + 1, window: resendWindow) }

    /// Seconds until a number that took the wrong codes of `failures` (the requests of the
    /// last `dailyFailureWindow`) may have codes again; nil when it may now. The oldest
    /// requests leave the window first.
    public func dailyFailureDelay(_ failures: [OTPFailures], now: Date) -> Int? {
        var total = failures.reduce(0) { $0 + $1.count }
        for failure in failures.sorted(by: { $0.requestedAt < $1.requestedAt }) {
            guard total >= dailyFailureLimit else { break }
            total -= failure.count
            if total < dailyFailureLimit {
                return max(1, secondsUntil(failure.requestedAt.addingTimeInterval(dailyFailureWindow), from: now))
            }
        }
        return total >= dailyFailureLimit ? Int(dailyFailureWindow) : nil
    }

    /// Seconds until another code may be sent for a phone and purpose that had codes sent at
    /// `previousSends`; nil when one may be sent now.
    public func sendDelay(previousSends: [Date], now: Date) -> Int? {
        sendLimit.retryAfter(previousSends, now: now, minimumInterval: resendInterval)
    }
}
