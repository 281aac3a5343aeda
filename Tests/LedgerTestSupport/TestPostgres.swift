import Foundation
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import Logging

/// The PostgreSQL server the tests run against: the one `scripts/test.sh` started
/// (`LEDGER_TEST_PG_PORT`), or else a throwaway cluster this process starts and stops.
public enum TestPostgres {
    private static let state = ServerState()

    /// The port of the test server, starting a local cluster on first use when none was given.
    public static func port() async throws -> Int {
        try await state.port()
    }

    public static func url(database: String) async throws -> String {
        "postgresql://postgres@127.0.0.1:\(try await port())/\(database)?connect_timeout=30"
    }

    /// The repository's `schema/` folder.
    public static var schemaDirectory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("schema")
    }

    /// Runs `body` with a new, migrated database that is dropped afterwards.
    public static func withDatabase<T>(
        migrated: Bool = true, maximumConnections: Int = 12, _ body: (TestDatabase) async throws -> T
    ) async throws -> T {
        let name = "t_" + Hex.encode(try SecureRandom.bytes(6))
        let admin = PostgresClient(configuration: .init(url: try await url(database: "postgres"), maximumConnections: 1))
        // A migrated database is a copy of one migrated once per process: every migration per
        // test was most of a short test's time.
        if migrated {
            try await admin.query("CREATE DATABASE \(name) TEMPLATE \(try await state.migratedTemplate())")
        } else {
            try await admin.query("CREATE DATABASE \(name)")
        }
        let database = TestDatabase(
            name: name, url: try await url(database: name), maximumConnections: maximumConnections)
        do {
            let value = try await database.runningStores { try await body(database) }
            await database.close()
            try await admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            await admin.shutdown()
            return value
        } catch {
            await database.close()
            _ = try? await admin.query("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            await admin.shutdown()
            throw error
        }
    }
}

/// A database of one test.
public final class TestDatabase: Sendable {
    public let name: String
    public let url: String
    public let client: PostgresClient
    public let masterKey: MasterKey
    public let clock: ManualClock
    /// The stores `eventStore()` made, for `runningStores` to run.
    private let stores: AsyncStream<EventStore>
    private let storesToRun: AsyncStream<EventStore>.Continuation

    init(name: String, url: String, maximumConnections: Int) {
        (stores, storesToRun) = AsyncStream.makeStream(of: EventStore.self)
        self.name = name
        self.url = url
        self.client = PostgresClient(configuration: .init(url: url, maximumConnections: maximumConnections))
        self.masterKey = try! MasterKey.generate()
        self.clock = ManualClock()
    }

    /// An event store on this database with the test's clock and master key, running (its
    /// group commit and NOTIFYs) until the test ends, as serve runs its store.
    public func eventStore(masterKey: MasterKey? = nil) -> EventStore {
        let store = EventStore(client: client, keyring: SubjectKeyring(masterKey: masterKey ?? self.masterKey), clock: clock)
        store.prepareToRun()
        storesToRun.yield(store)
        return store
    }

    /// Runs `body` while every store `eventStore()` makes runs; stops them when it ends.
    func runningStores<T>(_ body: () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [stores] in
                await withDiscardingTaskGroup { runs in
                    for await store in stores { runs.addTask { await store.run() } }
                }
            }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// Sessions of this database waiting for a lock: a stream's (advisory) lock, a row's.
    public func lockWaits() async throws -> Int {
        let waiting = try await client.query(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        return Int(try waiting[0].int(0) ?? 0)
    }

    /// Waits until at least `count` sessions of this database wait for a lock, or `timeout` passes.
    public func waitForLockWaits(_ count: Int, timeout: Duration = .seconds(5)) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await lockWaits() < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    func close() async {
        await client.shutdown()
    }
}

private actor ServerState {
    private var starting: Task<Int, any Error>?
    private var templating: Task<String, any Error>?

    /// The name of a database migrated to the latest schema, made once per process and never
    /// connected to again (`CREATE DATABASE … TEMPLATE` refuses a template with sessions).
    func migratedTemplate() async throws -> String {
        if let templating { return try await templating.value }
        let task = Task<String, any Error> {
            let name = "template_\(getpid())_" + Hex.encode(try SecureRandom.bytes(4))
            let admin = PostgresClient(configuration: .init(url: try await TestPostgres.url(database: "postgres"), maximumConnections: 1))
            try await admin.query("CREATE DATABASE \(name)")
            await admin.shutdown()
            let client = PostgresClient(configuration: .init(url: try await TestPostgres.url(database: name), maximumConnections: 1))
            do {
                try await SchemaMigrator(directory: TestPostgres.schemaDirectory).migrate(client: client)
            } catch {
                await client.shutdown()
                throw error
            }
            await client.shutdown()
            return name
        }
        templating = task
        return try await task.value
    }

    /// One start for the whole process: concurrent tests share the same task.
    func port() async throws -> Int {
        if let starting { return try await starting.value }
        let task = Task<Int, any Error> {
            if let configured = ProcessInfo.processInfo.environment["LEDGER_TEST_PG_PORT"], let port = Int(configured) {
                return port
            }
            let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ledger-tests-\(getpid())")
            let cluster = try await LocalCluster.start(directory: directory, database: "ledger", durable: false)
            ClusterReaper.register(cluster)
            return cluster.port
        }
        starting = task
        return try await task.value
    }
}

/// Stops a cluster this process started when the process exits.
private enum ClusterReaper {
    nonisolated(unsafe) static var cluster: LocalCluster?

    static func register(_ cluster: LocalCluster) {
        self.cluster = cluster
        atexit { ClusterReaper.cluster?.stop() }
    }
}

extension EventStore {
    /// Waits until the global feed shows at least `count` events. The feed only shows
    /// transactions older than every running one in the whole cluster, and other tests run
    /// transactions in parallel, so a just-committed event may take a moment to appear.
    public func waitForFeed(count: Int, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await readAll(after: .start, limit: count).events.count >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw FeedTimeout()
    }
}

/// The feed did not reach the expected size in time.
public struct FeedTimeout: Error {}
