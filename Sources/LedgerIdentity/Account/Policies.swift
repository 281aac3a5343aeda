import Foundation

/// The product's rules as one value: `standard` is the spec's numbers, and a configuration sets
/// its own (`Policies.settings`: one environment variable per number). `decide` reads them from
/// its `DecisionContext`, the services from their `AccountsEnvironment`; `evolve` reads none.
/// OTP numbers are `OTPPolicy`, held here as `otp`.
public struct Policies: Sendable, Equatable {
    /// The product spec's values.
    public static let standard = Policies()

    /// Codes: TTL, attempts, resends, countdown, caps (`OTPPolicy`).
    public var otp = OTPPolicy()
    /// Access tokens live 15 minutes; refresh tokens 30 days, rotated on every use.
    public var accessTokenLifetime: TimeInterval = 900
    public var refreshTokenLifetime: TimeInterval = 2_592_000
    /// How long a "Verify it's you" grant lasts.
    public var reauthGrantLifetime: TimeInterval = 900
    /// How long a provider re-auth nonce lasts, and the oldest `iat` a provider token may have.
    public var reauthNonceLifetime: TimeInterval = 300
    /// Verification, change, reset and re-auth links.
    public var emailLinkLifetime: TimeInterval = 1800
    /// The revert link sent to the old address after an email change.
    public var emailRevertLifetime: TimeInterval = 604_800
    /// Email links of one purpose: the "Resend link in 0:27" countdown, and the first send and
    /// 3 resends per 15 minutes, like the OTP resend rule.
    public var linkResend = LinkResendPolicy()
    /// A revert undoes what any session added this long before the change it reverts (besides
    /// everything after it, and whatever the changing session added): an intruder with the
    /// password may prepare from a second session first. The owner adds back what was theirs.
    public var revertLookBack: TimeInterval = 86_400
    /// How long a provider sign-in waits (`link_token`) for the sign-in that proves the account it
    /// found by email.
    public var providerLinkLifetime: TimeInterval = 900
    /// The oldest Apple server-to-server notification (by `iat`) acted on; older ones are
    /// refused as replays. A day: Apple retries for a while, and an outage of ours must not
    /// lose an `account-delete` (the service remembers every id it acted on for longer).
    public var appleNotificationMaxAge: TimeInterval = 86_400
    /// Live re-auth nonces one session may hold at once: enough for a person retrying, not a
    /// way to grow the account's state.
    public var reauthNonceLimit = 10
    /// Failed sign-ins (or password re-auths) before the lockout, and how long it lasts.
    public var loginMaxFailures = 5
    public var loginLockout: TimeInterval = 900
    /// Failed sign-ins per client (all accounts together) per `limitWindow`.
    public var ipLoginFailureLimit = 50
    /// Sign-ups and reset requests, and registration lookups, per client per `limitWindow`.
    public var ipSignupLimit = 30
    public var ipLookupLimit = 30
    public var limitWindow: TimeInterval = 900
    /// The language of messages to an account (and of answers to a request) that says none of
    /// the service's (`LEDGER_DEFAULT_LOCALE`).
    public var defaultLanguage: Language = .en
    /// Pictures one account may upload per `limitWindow` (`PUT /me/avatar`).
    public var avatarUploadLimit = 10
    /// Reads of the support desk (searches, summaries, session lists) per API key (or staff
    /// member) per `supportReadWindow`: more than a person helping people makes, fewer than a
    /// script testing a list of addresses, or writing looks into someone's history, would need.
    public var supportReadLimit = 300
    public var supportReadWindow: TimeInterval = 3600
    /// Deletion → purge, and deletion → the same identifier may register again.
    public var purgeDelay: TimeInterval = 2_592_000
    public var signupCooldown: TimeInterval = 604_800
    /// Two-factor: a sign-in's challenge (`mfa_token`) lasts 5 minutes and ends after 5 wrong
    /// codes; 10 recovery codes; TOTP steps of 30 s, one step of drift either way (RFC 6238).
    public var mfaChallengeLifetime: TimeInterval = 300
    public var mfaMaxFailures = 5
    /// Wrong TOTP codes at sign-in one account may take per `mfaDailyFailureWindow` (and wrong
    /// TOTP re-auths one session may take); then those checks are refused until the window
    /// ends. The 15-minute lockout alone would leave a guesser who holds the password 480 tries
    /// a day against three live codes in a million. Recovery codes stay open to the owner.
    public var mfaDailyFailureLimit = 20
    public var mfaDailyFailureWindow: TimeInterval = 86_400
    public var recoveryCodeCount = 10
    public var totpStep: TimeInterval = 30
    public var totpDriftSteps: Int64 = 1
    /// `last_used_at` of a session is written at most this often.
    public var sessionTouchInterval: TimeInterval = 60
    /// scrypt cost (N = 2^logN, r = 8, p = 1).
    public var scryptLogN = 17

    public init() {}
}

/// The labels of the keys derived from the master key (`MasterKey.derivedKey(label:)`), in one
/// place: a label changed is every value keyed by it lost.
public enum KeyLabel {
    /// HMAC of the deletion cooldown's identifiers.
    public static let signupCooldown = "signup-cooldown"
    /// HMAC of OTP codes.
    public static let otpCode = "otp-code"
    /// Seals the identities waiting in provider `link_token`s.
    public static let providerLinkToken = "provider-link-token"
    /// Seals the provider refresh tokens that wait in the outbox to be revoked.
    public static let providerTokenRevocation = "provider-token-revocation"
    /// Binds `device_token`s to their accounts.
    public static let deviceToken = "device-token"
    /// Seals webhook subscriptions' secrets.
    public static let webhookSubscriptionSecret = "webhook-subscription-secret"
    /// Authenticates the challenges of passkey ceremonies.
    public static let passkeyChallenge = "passkey-challenge"
    /// Seals the private keys that sign JWT access tokens.
    public static let accessTokenSigningKey = "access-token-signing-key"
    /// Authenticates the challenges of the console's passkey ceremonies (a relying party of its own).
    public static let staffPasskeyChallenge = "staff-passkey-challenge"
    /// Derives each console session's form token from its cookie.
    public static let staffCSRF = "staff-csrf"
}
