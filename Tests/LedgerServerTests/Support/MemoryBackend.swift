import Foundation
import Hummingbird
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEvents
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import Synchronization
import Testing

/// The API on in-memory adapters: accounts, code requests, attempt counters, spent passkey
/// challenges and API keys in this process, with the same services and router as serve (no
/// event API: its routes are not there). For the endpoint tests that need no database; those of
/// the store, the feed, concurrency across processes and faults keep PostgreSQL.
final class MemoryBackend: TestBackend {
    let clock = ManualClock()
    let masterKey: MasterKey
    let apiKeys = InMemoryAPIKeys()
    /// The access-token signing keys, kept across the applications built on this backend.
    let signingKeys = InMemorySigningKeys()
    /// The console's staff, kept across the applications built on this backend.
    let staff: InMemoryStaffRepository
    /// The repository of the application built last (`application`), whose outbox the test reads.
    private let repositories = Mutex<(accounts: InMemoryAccountRepository, otps: InMemoryOTPRepository)?>(nil)

    init() throws {
        masterKey = try MasterKey.generate()
        staff = InMemoryStaffRepository(clock: clock)
    }

    /// Runs `body` with a fresh backend.
    static func with<T>(_ body: (MemoryBackend) async throws -> T) async throws -> T {
        try await body(try MemoryBackend())
    }

    /// The router's dependencies with the configuration's defaults changed by `configure` (and a
    /// cheap scrypt, as on PostgreSQL).
    func dependencies(configure: (inout LedgerConfiguration) -> Void = { _ in }) throws -> RouterDependencies {
        var configuration = LedgerConfiguration()
        configuration.policies.scryptLogN = 4
        configure(&configuration)
        let retention = configuration.retention(masterKey: masterKey)
        let accounts = try InMemoryAccountRepository(
            clock: clock, policies: configuration.policies, retention: retention, masterKey: masterKey)
        let otps = InMemoryOTPRepository(accounts: accounts, clock: clock)
        repositories.withLock { $0 = (accounts, otps) }
        let environment = AccountsEnvironment(
            repository: accounts, clock: clock, hasher: try PasswordHasher(parameters: Scrypt(logN: configuration.policies.scryptLogN)),
            counters: InMemoryAttemptCounters(), retention: retention,
            devices: DeviceTokens(key: masterKey.derivedKey(label: KeyLabel.deviceToken)), linkBaseURL: configuration.linkBaseURL,
            accessTokens: JWTAccessTokens(
                keys: SigningKeys(
                    store: signingKeys, masterKey: masterKey, clock: clock, tokenLifetime: configuration.policies.accessTokenLifetime,
                    activationDelay: TimeInterval(configuration.signingKeyActivationSeconds)),
                settings: configuration.accessTokens, clock: clock))
        return RouterDependencies(
            configuration: configuration, clock: clock, metrics: LedgerMetrics(), readiness: NoDatabase(),
            account: try AccountServices(
                configuration: configuration, environment: environment, otps: otps,
                spent: InMemorySpentChallenges(), imports: accounts, staff: staff, avatars: accounts, masterKey: masterKey,
                clock: clock),
            apiKeyGuard: APIKeyGuard(keys: apiKeys, requestsPerSecond: configuration.apiKeyRateLimit), eventAPI: nil,
            openAPI: OpenAPIController.load())
    }

    func newestMessage(template: String, to recipient: String?) async throws -> QueuedMessage? {
        guard let accounts = repositories.withLock({ $0?.accounts }) else { return nil }
        return await accounts.outbox.last { $0.template == template && (recipient == nil || $0.to == recipient) }
            .map { QueuedMessage(to: $0.to, code: $0.code, token: $0.token, locale: $0.locale) }
    }

    func storedEventCount(type: String?) async throws -> Int {
        guard let (accounts, otps) = repositories.withLock({ $0 }) else { return 0 }
        return await accounts.eventCount(type: type) + otps.eventCount(type: type)
    }

    func queuedMessages(template: String?) async throws -> [QueuedMessage] {
        guard let accounts = repositories.withLock({ $0?.accounts }) else { return [] }
        return await accounts.outbox.filter { template == nil || $0.template == template }.map {
            QueuedMessage(
                to: $0.to, code: $0.code, token: $0.token, link: $0.link, details: $0.details, locale: $0.locale,
                channel: $0.channel.rawValue)
        }
    }

    func sessions() async throws -> [SessionRow] {
        guard let accounts = repositories.withLock({ $0?.accounts }) else { return [] }
        return await accounts.allStates.flatMap { state in
            state.sessions.values.map { SessionRow(accountEmail: state.email, live: $0.isActive, revokedReason: $0.revokedReason) }
        }
    }

    func unusedLinkCount(purpose: String) async throws -> Int {
        guard let accounts = repositories.withLock({ $0?.accounts }) else { return 0 }
        return await accounts.allStates.reduce(0) { $0 + $1.pendingLinks.values.count { $0.purpose.rawValue == purpose } }
    }

    func accountCount() async throws -> Int {
        guard let accounts = repositories.withLock({ $0?.accounts }) else { return 0 }
        return await accounts.accountCount
    }

    /// An account's state as the repository folds it.
    func state(of accountID: UUID) async throws -> AccountState {
        let accounts = try #require(repositories.withLock { $0?.accounts })
        return try await accounts.load(accountID)
    }

    /// An account's events as the repository recorded them, oldest first.
    func history(of accountID: UUID) async throws -> [RecordedEvent] {
        let accounts = try #require(repositories.withLock { $0?.accounts })
        return try await accounts.history(accountID)
    }

    /// The code requests' event types, request by request in the order they were made.
    func codeEventTypes() async -> [String] {
        guard let otps = repositories.withLock({ $0?.otps }) else { return [] }
        return await otps.eventTypes()
    }

    /// Nothing to be unready for: there is no database.
    private struct NoDatabase: Readiness {
        func check() async -> NotReady? { nil }
        func standbyStatus() -> StandbyStatus? { nil }
    }
}

/// The API on `backend`, as `configure` sets it up; `behindProxy` trusts the loopback as a
/// proxy, so a test names each request's client with `X-Forwarded-For`.
func testApplication(
    _ backend: MemoryBackend, behindProxy: Bool = false, configure: (inout LedgerConfiguration) -> Void = { _ in }
) throws -> some ApplicationProtocol {
    Application(
        router: buildRouter(
            try backend.dependencies {
                if behindProxy { $0.trustedProxies = ["127.0.0.1/32", "::1/128"] }
                configure(&$0)
            }))
}
