import Foundation
import LedgerCore
import LedgerIdentity

/// What every account use case works with, built once at start-up: each service holds it
/// rather than reaching the shared parts through `AccountService` (two-factor still asks the
/// provider service for a waiting `link_token`). Its guards are not optional, so a service
/// cannot be wired without the lockouts and the per-client limits.
public struct AccountsEnvironment: Sendable {
    public let repository: any AccountRepository
    public let clock: any LedgerClock
    public let hasher: PasswordHasher
    public let passwordPolicy: PasswordPolicy
    /// The rules in force: the repository's, which its `decide` reads, so the two cannot differ.
    public var policies: Policies { repository.policies }
    /// Failed sign-ins and re-auths per account, session and client.
    public let throttle: LoginThrottle
    /// Sign-ups and lookups per client, counted before the work they protect.
    public let limits: RequestLimits
    public let links: EmailLinks
    public let retention: Retention
    /// The `device_token`s of sessions (the new sign-in alert reads them).
    public let devices: DeviceTokens
    /// Moves `last_used_at` of the sessions that authenticate.
    public let activity: SessionActivity
    /// Accounts' message languages read lately, for the language of their refusals.
    public let recentLanguages = RecentLanguages()
    /// JWT access tokens: minted when their format is `jwt`, checked whenever one is presented
    /// (tokens of the other format stay good until they expire). Nil: opaque tokens only.
    public let accessTokens: JWTAccessTokens?

    /// - Parameters:
    ///   - counters: where the throttle and the limits count (shared by every instance in production).
    ///   - retention: the same as the repository's (its key finds the cooldown list's rows).
    ///   - linkBaseURL: where email links point.
    public init(
        repository: any AccountRepository, clock: any LedgerClock, hasher: PasswordHasher, counters: any AttemptCounters,
        retention: Retention, devices: DeviceTokens, linkBaseURL: String = "https://321.fit",
        passwordPolicy: PasswordPolicy = .standard, accessTokens: JWTAccessTokens? = nil
    ) {
        self.accessTokens = accessTokens
        let policies = repository.policies
        self.repository = repository
        self.clock = clock
        self.hasher = hasher
        self.passwordPolicy = passwordPolicy
        self.throttle = LoginThrottle(counters: counters, policies: policies)
        self.limits = RequestLimits(counters: counters, policies: policies)
        self.links = EmailLinks(policies: policies, baseURL: linkBaseURL)
        self.retention = retention
        self.devices = devices
        self.activity = SessionActivity(repository: repository, clock: clock, interval: policies.sessionTouchInterval)
    }
}
