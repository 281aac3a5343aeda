import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import LedgerProviders
import LedgerServer

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
    /// The account use cases on the PostgreSQL repositories.
    public let account: AccountServices
    public var environment: AccountsEnvironment { account.environment }
    public var accounts: AccountService { account.accounts }
    public var otp: OTPService { account.otp }
    public var reauth: ReauthService { account.reauth }
    public var providers: ProviderService { account.providers }
    public var twoFactor: TwoFactorService { account.twoFactor }
    public var passkeys: PasskeyService { account.passkeys }
    public var pages: LinkPages { account.pages }
    public var providerTokens: any ProviderTokenClient { account.providerTokens }
    /// Opens the revocations waiting in the outbox.
    public let revocations: ProviderTokenRevocations
    public let apiKeys: APIKeys
    /// The API-key check of every service call, with its per-key rate limit.
    public let apiKeyGuard: APIKeyGuard
    public let audit: AccountAudit
    public let metrics = LedgerMetrics()
    public let subscriptions: WebhookSubscriptions
    /// The keys that sign JWT access tokens, and the tokens themselves.
    public let signingKeys: SigningKeys
    public let accessTokens: JWTAccessTokens
    /// The OpenAPI document to serve, when it was found.
    public var openAPI: OpenAPIController?

    public init(
        configuration: LedgerConfiguration, client: PostgresClient, eventStore: EventStore, migrator: SchemaMigrator,
        clock: any LedgerClock, masterKey: MasterKey, readClient: PostgresClient? = nil, measuringClient: PostgresClient? = nil
    ) throws {
        let standbyMonitor = readClient.map {
            StandbyMonitor(
                route: StandbyRoute(primary: client, standby: $0, clock: clock), maxLagSeconds: configuration.readMaxLagSeconds,
                failoverSeconds: configuration.readFailoverSeconds, measuring: measuringClient,
                clock: clock)
        }
        self.standbyMonitor = standbyMonitor
        let readStore = standbyMonitor.map { eventStore.reading(through: $0.route) } ?? eventStore
        self.readStore = readStore
        let policies = configuration.policies
        let retention = configuration.retention(masterKey: masterKey)
        let repository = PostgresAccountRepository(store: eventStore, clock: clock, policies: policies, retention: retention)
        let signingKeys = configuration.signingKeys(client: client, masterKey: masterKey, clock: clock)
        self.signingKeys = signingKeys
        let accessTokens = JWTAccessTokens(keys: signingKeys, settings: configuration.accessTokens, clock: clock)
        let environment = AccountsEnvironment(
            repository: repository, clock: clock, hasher: try PasswordHasher(parameters: Scrypt(logN: policies.scryptLogN)),
            counters: PostgresAttemptCounters(client: client), retention: retention,
            devices: DeviceTokens(key: masterKey.derivedKey(label: KeyLabel.deviceToken)), linkBaseURL: configuration.linkBaseURL,
            accessTokens: accessTokens)
        self.accessTokens = accessTokens
        self.account = try AccountServices(
            configuration: configuration, environment: environment, otps: PostgresOTPRepository(accounts: repository),
            spent: PostgresSpentChallenges(client: client), imports: PostgresAccountImports(repository: repository),
            staff: PostgresStaffRepository(store: eventStore, clock: clock), avatars: PostgresAvatarRepository(accounts: repository),
            masterKey: masterKey, clock: clock)
        self.revocations = ProviderTokenRevocations(masterKey: masterKey)
        self.apiKeys = APIKeys(client: client, clock: clock, standby: standbyMonitor?.route)
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

    /// The router's dependencies on these adapters: readiness from the pool, the schema and
    /// the standby; the event API on the read store.
    public var routerDependencies: RouterDependencies {
        RouterDependencies(
            configuration: configuration, clock: clock, metrics: metrics,
            readiness: ReadinessProbe(client: client, migrator: migrator, standby: standbyMonitor), account: account,
            apiKeyGuard: apiKeyGuard,
            eventAPI: .init(
                feed: readStore, audit: audit, subscriptions: subscriptions,
                statistics: { [client] in try await OperationalStatistics.read(client: client, now: $0) }),
            openAPI: openAPI)
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

    /// The access-token signing keys on `client`, sealed under `masterKey` (`serve` and
    /// `ledger signing-keys` must agree on both).
    public func signingKeys(client: PostgresClient, masterKey: MasterKey, clock: any LedgerClock) -> SigningKeys {
        SigningKeys(
            store: PostgresSigningKeys(client: client), masterKey: masterKey, clock: clock, tokenLifetime: policies.accessTokenLifetime,
            activationDelay: TimeInterval(signingKeyActivationSeconds))
    }

    /// The purge delay and the re-signup cooldown of the policies, with the cooldown list's key
    /// from `masterKey`: `serve` and `ledger purge` must list identifiers under one key.
    public func retention(masterKey: MasterKey) -> Retention {
        Retention(policies: policies, cooldownKey: masterKey.derivedKey(label: KeyLabel.signupCooldown))
    }
}
