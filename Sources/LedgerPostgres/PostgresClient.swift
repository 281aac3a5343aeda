import CLibPQ
import Foundation
import LedgerCore
import Logging
import Synchronization

/// A pool of libpq connections with a maximum size, scoped checkout and transactions.
///
/// Connections are opened lazily, checked for liveness when handed out, and dropped when they
/// break, so the service recovers by itself after PostgreSQL restarts.
public final class PostgresClient: Sendable {
    public struct Configuration: Sendable {
        /// A libpq connection string or URL (`postgresql://user@host:port/db`).
        public var url: String
        /// Connections open at most at once.
        public var maximumConnections: Int
        /// How often a transaction that hit a serialization failure or deadlock is run again.
        public var transactionRetries: Int
        /// How long a caller waits for a connection when all are in use before `poolExhausted`
        /// (the service answers `503` with `Retry-After`); nil waits as long as it takes.
        public var checkoutTimeout: Duration?
        /// How many callers may wait for a connection at once; the next one fails at once with
        /// `poolExhausted` rather than queueing behind them.
        public var maximumWaiters: Int

        public init(
            url: String, maximumConnections: Int = 16, transactionRetries: Int = 5, checkoutTimeout: Duration? = nil,
            maximumWaiters: Int = 1024
        ) {
            self.url = url
            self.maximumConnections = maximumConnections
            self.transactionRetries = transactionRetries
            self.checkoutTimeout = checkoutTimeout
            self.maximumWaiters = maximumWaiters
        }
    }

    public let configuration: Configuration
    let executor: BlockingExecutor
    /// Nil only when epoll is unavailable; every statement then runs on `executor`.
    let readiness = SocketReadiness()
    private let pool: ConnectionPool
    private let statements = StatementCounter()
    /// Bumped by `renewConnections`: connections opened before are closed when next returned or taken.
    private let generation = Atomic<Int>(0)
    let serverPin = ServerPin()
    let logger: Logger

    /// Statements this client has sent since it was made (`BEGIN` and `COMMIT` included): what a
    /// test reads to hold a request to its budget of round trips.
    public var statementsSent: Int { statements.value }

    /// Callers waiting for a connection now (every one was busy).
    public var waitingForConnection: Int { pool.waiting }

    public init(configuration: Configuration, logger: Logger = Logger(label: "ledger.postgres")) {
        self.configuration = configuration
        self.logger = logger
        // One extra thread so a connection being opened never waits behind busy statements.
        self.executor = BlockingExecutor(threads: configuration.maximumConnections + 1)
        self.pool = ConnectionPool(
            maximum: configuration.maximumConnections, maximumWaiters: configuration.maximumWaiters,
            checkoutTimeout: configuration.checkoutTimeout)
    }

    deinit {
        readiness?.shutdown()
    }

    /// Closes every idle connection and refuses new checkouts.
    public func shutdown() async {
        pool.close()
        await executor.shutdown()
        readiness?.shutdown()
    }

    /// Replaces every connection: idle ones when next taken, busy ones when given back. For a
    /// pool whose server changed its role under it (a standby promoted by a failover, which a
    /// `prefer-standby` URL must leave for a standby), so libpq chooses a server again.
    public func renewConnections() {
        generation.add(1, ordering: .relaxed)
    }

    /// Only connections to `identity` (`host:port`, as `ServerPin.identityQuery` reads it) are
    /// lent from now on; a change renews every connection. nil lends any.
    public func requireServer(_ identity: String?) {
        if serverPin.require(identity) { renewConnections() }
    }

    /// Has every new connection learn its server, and calls `handler` with the server of one that
    /// reached another than `requireServer` asked for: that connection is closed and its checkout
    /// fails (`connectionLost`, a `503`), as a read on a server nobody measured must not happen.
    public func onServerMismatch(_ handler: @escaping @Sendable (String) -> Void) {
        serverPin.onMismatch(handler)
    }

    /// Lends a connection to `body` and takes it back afterwards.
    ///
    /// A pooled connection that turns out dead on its first statement (PostgreSQL restarted
    /// while it sat idle) is replaced once, transparently, when nothing sent can have committed
    /// (`mayReplay`): running a statement twice could count or spend twice.
    public func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        var replacedStale = false
        while true {
            let (connection, reused) = try await checkout()
            connection.statementsSinceCheckout = 0
            connection.checkoutOpenedTransaction = nil
            do {
                let value = try await body(connection)
                try await connection.flush()
                statements.add(connection.statementsSinceCheckout)
                giveBack(connection)
                return value
            } catch let error as PostgresError
                where reused && !replacedStale
                && Self.mayReplay(
                    error, completedStatements: connection.statementsSinceCheckout, openedTransaction: connection.checkoutOpenedTransaction)
            {
                connection.close()
                pool.release(connection)
                replacedStale = true
                logger.info("replacing a stale pooled connection", metadata: ["reason": "\(error.message)"])
            } catch {
                statements.add(connection.statementsSinceCheckout)
                connection.discardQueued()
                giveBack(connection)
                throw error
            }
        }
    }

    /// Whether a reused connection lost on a checkout may have the checkout run again on a fresh
    /// one: lost before any result came back, and nothing of it can have committed. Either what
    /// was sent opened a transaction, or the server ended the session with an error of its own
    /// (57P01 to an idle session when it shut down: the statement never ran). A session ended
    /// with no word (the socket closed) may have committed: PostgreSQL ends a session that waits
    /// for its synchronous standby after committing locally, sending only a warning.
    static func mayReplay(_ error: PostgresError, completedStatements: Int, openedTransaction: Bool?) -> Bool {
        error.code == .connectionLost && completedStatements == 0 && (openedTransaction == true || error.serverEndedSession)
    }

    /// Runs `body` in a transaction, committing when it returns and rolling back when it throws.
    /// Serialization failures and deadlocks run the whole body again (it must be repeatable).
    public func transaction<T>(
        isolation: IsolationLevel = .readCommitted, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        var attempt = 0
        while true {
            do {
                return try await withConnection { try await $0.transaction(isolation.beginStatement, body) }
            } catch let error as PostgresError where error.isTransient && attempt < configuration.transactionRetries {
                attempt += 1
                try await Task.sleep(nanoseconds: UInt64.random(in: 1_000_000...(5_000_000 * UInt64(attempt))))
            }
        }
    }

    /// Runs one statement on a pooled connection.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresParameter] = []) async throws -> PostgresResult {
        try await withConnection { try await $0.query(sql, parameters) }
    }

    /// Throws (closing the connection) when it reached another server than the one required.
    private func checkServer(_ connection: PostgresConnection) throws {
        guard let required = serverPin.required, let identity = connection.serverIdentity, identity != required else { return }
        connection.close()
        pool.release(connection)
        serverPin.mismatched(identity)
        throw PostgresError(.connectionLost, message: "the connection reached another server than the one measured")
    }

    /// Returns a connection to the pool, closed first when `renewConnections` retired it.
    private func giveBack(_ connection: PostgresConnection) {
        if connection.generation != generation.load(ordering: .relaxed) { connection.close() }
        pool.release(connection)
    }

    private func checkout() async throws -> (PostgresConnection, reused: Bool) {
        while true {
            switch try await pool.acquire() {
            case .idle(let connection):
                // Cheap and non-blocking: notices a server that closed the socket meanwhile.
                if connection.generation == generation.load(ordering: .relaxed) && connection.probeIdle() {
                    try checkServer(connection)
                    return (connection, true)
                }
                connection.close()
                pool.release(connection)
            case .openNew:
                let connection: PostgresConnection
                do {
                    let current = generation.load(ordering: .relaxed)
                    connection = try await PostgresConnection.connect(url: configuration.url, executor: executor, readiness: readiness)
                    connection.generation = current
                } catch {
                    pool.openFailed()
                    throw error
                }
                // From here the connection holds its slot: a failure gives it back through `release`.
                if serverPin.isActive {
                    do {
                        connection.serverIdentity = try await connection.query(ServerPin.identityQuery).rows.first?.string(0)
                    } catch {
                        connection.close()
                        pool.release(connection)
                        throw error
                    }
                }
                try checkServer(connection)
                return (connection, false)
            }
        }
    }
}

/// Transaction isolation levels.
public enum IsolationLevel: Sendable {
    case readCommitted, repeatableRead, serializable

    var beginStatement: String {
        switch self {
        case .readCommitted: return "BEGIN"
        case .repeatableRead: return "BEGIN ISOLATION LEVEL REPEATABLE READ"
        case .serializable: return "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
    }
}

/// A count shared by every checkout of a client.
private final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .relaxed) }

    func add(_ statements: Int) {
        count.add(statements, ordering: .relaxed)
    }
}

/// The pool is a member of the service group that drains it after its users stop.
extension PostgresClient: DrainingService {}
