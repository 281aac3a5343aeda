import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// A pool on one database and the event store over it, made and shut down together: what every
/// one-shot command builds on (`ledger purge` through `PurgeAssembly`, `ledger dev
/// append-load`, each `ledger-bench` command), as `ServeAssembly` is serve's. What it makes
/// besides (an account service's hasher, another pool) it owns too, so a command that ends
/// leaves no pool or thread behind.
public struct StoreAssembly: Sendable {
    public let client: PostgresClient
    public let store: EventStore
    /// Everything it made, the pool first: shut down last made first.
    public let resources: ResourceScope

    /// A pool of `connections` on `url` and a store sealing under `masterKey`.
    public init(
        url: String, connections: Int, masterKey: MasterKey, clock: any LedgerClock = SystemClock(),
        appendTransactions: Int = 2, appendStallThreshold: Duration = .milliseconds(5)
    ) {
        resources = ResourceScope()
        client = resources.own(PostgresClient(configuration: .init(url: url, maximumConnections: connections)))
        store = EventStore(
            client: client, keyring: SubjectKeyring(masterKey: masterKey), clock: clock, appendTransactions: appendTransactions,
            appendStallThreshold: appendStallThreshold)
    }

    /// The account service on this store (`clock` by default the store's), its hasher owned here.
    public func accounts(
        policies: Policies = .standard, retention: Retention = .development, clock: (any LedgerClock)? = nil,
        hashingThreads: Int = 2
    ) throws -> AccountService {
        let hasher = resources.own(
            try PasswordHasher(parameters: Scrypt(logN: policies.scryptLogN), maximumConcurrent: hashingThreads))
        return AccountService(
            environment: .postgres(store: store, clock: clock ?? store.clock, policies: policies, retention: retention, hasher: hasher))
    }

    /// The importer of accounts from another system on this store (`ledger import`, the benchmark).
    public func importer(policies: Policies = .standard, retention: Retention = .development) -> AccountImporter {
        let repository = PostgresAccountRepository(store: store, clock: store.clock, policies: policies, retention: retention)
        return AccountImporter(store: PostgresAccountImports(repository: repository))
    }

    /// Another pool, on `url` (a standby, say), shut down with the rest.
    public func pool(url: String, connections: Int) -> PostgresClient {
        resources.own(PostgresClient(configuration: .init(url: url, maximumConnections: connections)))
    }

    /// Runs `body` with the store running (its group commit's jobs, as serve runs them), then
    /// shuts everything down, whether `body` returned or threw.
    public func run<T: Sendable>(_ body: (StoreAssembly) async throws -> T) async throws -> T {
        do {
            let value = try await store.whileRunning { try await body(self) }
            await resources.shutdown()
            return value
        } catch {
            await resources.shutdown()
            throw error
        }
    }
}
