import Foundation
import LedgerIdentity
import LedgerServer

/// One environment variable that sets one number of the `Policies`, and the values it may
/// take. `Policies.settings` lists them all: a new setting is one row there.
public struct PolicySetting: Sendable {
    /// The number the variable sets: a count, or a duration given in seconds.
    public enum Target: Sendable {
        case count(any WritableKeyPath<Policies, Int> & Sendable)
        case seconds(any WritableKeyPath<Policies, TimeInterval> & Sendable)
    }

    public let variable: String
    public let target: Target
    public let range: ClosedRange<Int>
    /// An older variable that sets the same number when `variable` is not set, clamped to
    /// `range` (links once followed the codes' `LEDGER_OTP_RESEND_*`).
    public let fallback: String?

    init(_ variable: String, _ target: Target, _ range: ClosedRange<Int>, fallback: String? = nil) {
        self.variable = variable
        self.target = target
        self.range = range
        self.fallback = fallback
    }

    /// The value in `policies`, as the variable spells it.
    public func value(in policies: Policies) -> Int {
        switch target {
        case .count(let keyPath): policies[keyPath: keyPath]
        case .seconds(let keyPath): Int(policies[keyPath: keyPath])
        }
    }

    /// Sets the number to `value` (seconds for a duration).
    public func set(_ value: Int, in policies: inout Policies) {
        switch target {
        case .count(let keyPath): policies[keyPath: keyPath] = value
        case .seconds(let keyPath): policies[keyPath: keyPath] = TimeInterval(value)
        }
    }

    /// `policies` with the variable's value from `environment` (or its fallback's); a value
    /// that is no whole number, or out of `range`, is an error naming the variable.
    func read(_ string: (String) -> String?, into policies: inout Policies) throws {
        if let text = string(variable) {
            set(try wholeNumber(variable, text, in: range), in: &policies)
        } else if let fallback, let text = string(fallback), let value = Int(text) {
            set(min(max(value, range.lowerBound), range.upperBound), in: &policies)
        }
    }
}

extension Policies {
    static let day = 86_400
    /// The largest any setting may be: ten years, in seconds or in counts. Every number has a
    /// ceiling: a lifetime of years would make a grant a password, and a count or time past what
    /// PostgreSQL's intervals hold would fail every request.
    static let longestSetting = 3650 * day

    /// Every variable that sets a policy (docs/configuration.md), with its range.
    public static let settings: [PolicySetting] = [
        .init("LEDGER_OTP_TTL_SECONDS", .seconds(\.otp.ttl), 1...day),
        .init("LEDGER_OTP_MAX_ATTEMPTS", .count(\.otp.maxAttempts), 1...100),
        .init("LEDGER_OTP_RESEND_LIMIT", .count(\.otp.resendLimit), 0...longestSetting),
        .init("LEDGER_OTP_RESEND_WINDOW_SECONDS", .seconds(\.otp.resendWindow), 1...longestSetting),
        .init("LEDGER_OTP_RESEND_INTERVAL_SECONDS", .seconds(\.otp.resendInterval), 0...longestSetting),
        .init("LEDGER_REAUTH_TTL_SECONDS", .seconds(\.reauthGrantLifetime), 1...day),
        // An access token is checked offline until it expires: kept short (docs/api.md).
        .init("LEDGER_ACCESS_TOKEN_TTL_SECONDS", .seconds(\.accessTokenLifetime), 60...3600),
        .init("LEDGER_IP_OTP_LIMIT", .count(\.otp.addressLimit), 1...longestSetting),
        .init("LEDGER_ACCOUNT_OTP_LIMIT", .count(\.otp.accountLimit), 1...longestSetting),
        .init("LEDGER_IP_OTP_NETWORK_LIMIT", .count(\.otp.networkLimit), 1...longestSetting),
        .init("LEDGER_OTP_COUNTRY_HOURLY_LIMIT", .count(\.otp.regionLimit), 0...10_000_000),
        .init("LEDGER_OTP_DAILY_FAILURE_LIMIT", .count(\.otp.dailyFailureLimit), 1...longestSetting),
        // Never below one challenge's own attempts: a lower cap would lock the owner out for a
        // day on a typo. Never above 100: it is the only cap on TOTP guesses at sign-in (3 live
        // codes in a million).
        .init("LEDGER_MFA_DAILY_FAILURE_LIMIT", .count(\.mfaDailyFailureLimit), Policies.standard.mfaMaxFailures...100),
        .init("LEDGER_IP_LOGIN_FAILURE_LIMIT", .count(\.ipLoginFailureLimit), 1...longestSetting),
        .init("LEDGER_IP_SIGNUP_LIMIT", .count(\.ipSignupLimit), 1...longestSetting),
        .init("LEDGER_IP_LOOKUP_LIMIT", .count(\.ipLookupLimit), 1...longestSetting),
        .init("LEDGER_SUPPORT_READ_LIMIT", .count(\.supportReadLimit), 1...100_000),
        .init("LEDGER_EMAIL_LINK_TTL_SECONDS", .seconds(\.emailLinkLifetime), 1...(7 * day)),
        // At most 30 days: the address stays held from every other account as long.
        .init("LEDGER_EMAIL_REVERT_TTL_SECONDS", .seconds(\.emailRevertLifetime), 1...(30 * day)),
        // A configuration written when links followed the codes' countdown and limits keeps
        // working for links until it names their own. The window is at most a day: an
        // account's state keeps its link send times that long.
        .init(
            "LEDGER_LINK_RESEND_INTERVAL_SECONDS", .seconds(\.linkResend.interval), 0...Int(LinkResendPolicy.longestWindow),
            fallback: "LEDGER_OTP_RESEND_INTERVAL_SECONDS"),
        .init(
            "LEDGER_LINK_RESEND_LIMIT", .count(\.linkResend.limit), 0...LinkResendPolicy.largestLimit,
            fallback: "LEDGER_OTP_RESEND_LIMIT"),
        .init(
            "LEDGER_LINK_RESEND_WINDOW_SECONDS", .seconds(\.linkResend.window), 1...Int(LinkResendPolicy.longestWindow),
            fallback: "LEDGER_OTP_RESEND_WINDOW_SECONDS"),
        .init("LEDGER_LOGIN_MAX_FAILURES", .count(\.loginMaxFailures), 1...longestSetting),
        .init("LEDGER_LOGIN_LOCKOUT_SECONDS", .seconds(\.loginLockout), 1...day),
        .init("LEDGER_PURGE_AFTER_SECONDS", .seconds(\.purgeDelay), 0...longestSetting),
        .init("LEDGER_SIGNUP_COOLDOWN_SECONDS", .seconds(\.signupCooldown), 0...longestSetting),
        .init("LEDGER_SCRYPT_LOG_N", .count(\.scryptLogN), 1...22),
    ]
}
