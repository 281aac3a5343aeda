import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import LedgerProviders

/// What the routes need, built once at start-up from the configuration and shared by every
/// request.
public struct LedgerServices: Sendable {
    public let configuration: LedgerConfiguration
    public let client: PostgresClient
    public let eventStore: EventStore
    /// Where the feed, the event stream, webhooks and the audit read (`LEDGER_READ_DATABASE_URL`:
    /// a hot standby while `standbyMonitor` finds it within the lag bound, else the primary);
    /// `eventStore` itself without one.
    public let readStore: EventStore
    /// Measures the standby's lag and routes `readStore` by it; nil without a standby. `serve`
    /// runs it in its service group.
    public let standbyMonitor: StandbyMonitor?
    public let migrator: SchemaMigrator
    public let clock: any LedgerClock
    public let accounts: AccountService
    public let otp: OTPService
    public let reauth: ReauthService
    public let providers: ProviderService
    public let twoFactor: TwoFactorService
    /// The pages behind the email links.
    public let pages: LinkPages
    /// Apple's and Google's token endpoints; the delivery dispatcher revokes through them.
    public let providerTokens: any ProviderTokenClient
    /// Opens the revocations waiting in the outbox.
    public let revocations: ProviderTokenRevocations
    public let apiKeys: APIKeys
    /// The API-key check of every service call, with its per-key rate limit.
    public let apiKeyGuard: APIKeyGuard
    public let audit: AccountAudit
    public let metrics = LedgerMetrics()
    public let subscriptions: WebhookSubscriptions
    /// The OpenAPI document to serve, when it was found.
    public var openAPI: OpenAPIController?

    public init(
        configuration: LedgerConfiguration, client: PostgresClient, eventStore: EventStore, migrator: SchemaMigrator,
        clock: any LedgerClock, masterKey: MasterKey, readClient: PostgresClient? = nil
    ) throws {
        let standbyMonitor = readClient.map {
            StandbyMonitor(
                route: StandbyRoute(primary: client, standby: $0, clock: clock), maxLagSeconds: configuration.readMaxLagSeconds,
                clock: clock)
        }
        self.standbyMonitor = standbyMonitor
        let readStore = standbyMonitor.map { eventStore.reading(through: $0.route) } ?? eventStore
        self.readStore = readStore
        let verifier = JWKSIdentityTokenVerifier(
            apple: .apple(jwks: configuration.appleJWKS, clientIDs: configuration.appleClientIDs),
            google: .google(jwks: configuration.googleJWKS, clientIDs: configuration.googleClientIDs), clock: clock)
        let retention = configuration.retention(masterKey: masterKey)
        let repository = PostgresAccountRepository(store: eventStore, clock: clock, retention: retention)
        let counters = PostgresAttemptCounters(client: client)
        let accounts = AccountService(
            repository: repository,
            hasher: try PasswordHasher(parameters: Scrypt(logN: configuration.scryptLogN)), clock: clock,
            links: EmailLinks(
                lifetime: TimeInterval(configuration.emailLinkTTLSeconds), baseURL: configuration.linkBaseURL,
                revertLifetime: TimeInterval(configuration.emailRevertTTLSeconds), resend: configuration.linkResendPolicy),
            throttle: LoginThrottle(
                counters: counters,
                policy: .init(
                    maximumFailures: configuration.loginMaxFailures, lockout: TimeInterval(configuration.loginLockoutSeconds),
                    maximumFailuresPerAddress: configuration.ipLoginFailureLimit,
                    maximumSecondFactorFailures: configuration.mfaDailyFailureLimit)),
            limits: RequestLimits(
                counters: counters,
                policy: .init(signupsPerClient: configuration.ipSignupLimit, lookupsPerClient: configuration.ipLookupLimit)),
            retention: retention, devices: DeviceTokens(key: masterKey.derivedKey(label: KeyLabel.deviceToken)))
        self.accounts = accounts
        self.otp = OTPService(
            otps: PostgresOTPRepository(accounts: repository), accounts: accounts, policy: configuration.otpPolicy,
            codeKey: masterKey.derivedKey(label: KeyLabel.otpCode), reauthLifetime: TimeInterval(configuration.reauthTTLSeconds))
        self.reauth = ReauthService(accounts: accounts, lifetime: TimeInterval(configuration.reauthTTLSeconds))
        let providerTokens = try configuration.providerTokenClient(clock: clock)
        self.providerTokens = providerTokens
        self.revocations = ProviderTokenRevocations(masterKey: masterKey)
        self.providers = ProviderService(
            accounts: accounts, verifier: verifier,
            linkTokens: ProviderLinkTokens(key: masterKey.derivedKey(label: KeyLabel.providerLinkToken)), notificationVerifier: verifier,
            tokenClient: providerTokens, reauthLifetime: TimeInterval(configuration.reauthTTLSeconds))
        self.twoFactor = TwoFactorService(
            accounts: accounts, providers: providers, issuer: configuration.productName,
            reauthLifetime: TimeInterval(configuration.reauthTTLSeconds))
        self.pages = try LinkPages(product: configuration.productName, apps: configuration.apps)
        self.apiKeys = APIKeys(client: client, clock: clock)
        self.apiKeyGuard = APIKeyGuard(keys: apiKeys, requestsPerSecond: configuration.apiKeyRateLimit)
        self.audit = AccountAudit(store: readStore)
        self.subscriptions = try WebhookSubscriptions(
            store: eventStore, masterKey: masterKey, clock: clock, allowsPrivateNetworks: configuration.webhookAllowPrivateNetworks)
        self.openAPI = OpenAPIController.load()
        self.configuration = configuration
        self.client = client
        self.eventStore = eventStore
        self.migrator = migrator
        self.clock = clock
    }
}

extension LedgerConfiguration {
    /// Apple's and Google's token endpoints with the configured credentials; an Apple key file
    /// that cannot be read or is no P-256 key stops the start, naming the variable.
    public func providerTokenClient(clock: any LedgerClock) throws -> HTTPProviderTokenClient {
        var secret: AppleClientSecret?
        if let path = applePrivateKeyPath, let teamID = appleTeamID, let keyID = appleKeyID {
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ConfigurationError("LEDGER_APPLE_PRIVATE_KEY: '\(path)' cannot be read")
            }
            do {
                secret = try AppleClientSecret(teamID: teamID, keyID: keyID, privateKeyPEM: pem)
            } catch {
                throw ConfigurationError("LEDGER_APPLE_PRIVATE_KEY: '\(path)' is not a P-256 private key in PEM")
            }
        }
        return HTTPProviderTokenClient(
            apple: .init(tokenURL: appleTokenURL, revokeURL: appleRevokeURL, clientSecret: secret),
            google: .init(tokenURL: googleTokenURL, revokeURL: googleRevokeURL, clientSecret: googleClientSecret), clock: clock)
    }

    /// The purge delay and the re-signup cooldown these settings give, with the cooldown list's
    /// key from `masterKey`: `serve` and `ledger purge` must list identifiers under one key.
    public func retention(masterKey: MasterKey) -> Retention {
        Retention(
            purgeDelay: TimeInterval(purgeAfterSeconds), cooldown: TimeInterval(signupCooldownSeconds),
            cooldownKey: masterKey.derivedKey(label: KeyLabel.signupCooldown))
    }

    /// The email links' countdown and resend limit these settings give.
    public var linkResendPolicy: LinkResendPolicy {
        LinkResendPolicy(
            interval: TimeInterval(linkResendIntervalSeconds), limit: linkResendLimit, window: TimeInterval(linkResendWindowSeconds))
    }

    /// The OTP rules these settings give.
    public var otpPolicy: OTPPolicy {
        var policy = OTPPolicy()
        policy.ttl = TimeInterval(otpTTLSeconds)
        policy.maxAttempts = otpMaxAttempts
        policy.resendLimit = otpResendLimit
        policy.resendWindow = TimeInterval(otpResendWindowSeconds)
        policy.resendInterval = TimeInterval(otpResendIntervalSeconds)
        policy.addressLimit = ipOTPLimit
        policy.accountLimit = accountOTPLimit
        policy.networkLimit = ipNetworkOTPLimit
        policy.regionLimit = otpCountryHourlyLimit
        policy.allowedRegions = smsCountries
        policy.dailyFailureLimit = otpDailyFailureLimit
        return policy
    }
}
