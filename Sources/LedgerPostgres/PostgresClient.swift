import CLibPQ
import Foundation
import Logging

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

        public init(url: String, maximumConnections: Int = 16, transactionRetries: Int = 5, checkoutTimeout: Duration? = nil) {
            self.url = url
            self.maximumConnections = maximumConnections
            self.transactionRetries = transactionRetries
            self.checkoutTimeout = checkoutTimeout
        }
    }

    public let configuration: Configuration
    let executor: BlockingExecutor
    /// Nil only when epoll is unavailable; every statement then runs on `executor`.
    let readiness = SocketReadiness()
    private let pool: ConnectionPool
    let logger: Logger

    public init(configuration: Configuration, logger: Logger = Logger(label: "ledger.postgres")) {
        self.configuration = configuration
        self.logger = logger
        // One extra thread so a connection being opened never waits behind busy statements.
        self.executor = BlockingExecutor(threads: configuration.maximumConnections + 1)
        self.pool = ConnectionPool(maximum: configuration.maximumConnections, checkoutTimeout: configuration.checkoutTimeout)
    }

    deinit {
        readiness?.shutdown()
    }

    /// Closes every idle connection and refuses new checkouts.
    public func shutdown() async {
        await pool.close()
        await executor.shutdown()
        readiness?.shutdown()
    }

    /// Lends a connection to `body` and takes it back afterwards.
    ///
    /// A pooled connection that turns out dead on its first statement (PostgreSQL restarted
    /// while it sat idle) is replaced once, transparently: the server never ran that statement.
    public func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        var replacedStale = false
        while true {
            let (connection, reused) = try await checkout()
            connection.statementsSinceCheckout = 0
            do {
                let value = try await body(connection)
                try await connection.flush()
                await pool.release(connection)
                return value
            } catch let error as PostgresError
                where error.code == .connectionLost && reused && !replacedStale && connection.statementsSinceCheckout == 0
            {
                connection.close()
                await pool.release(connection)
                replacedStale = true
                logger.info("replacing a stale pooled connection", metadata: ["reason": "\(error.message)"])
            } catch {
                connection.discardQueued()
                await pool.release(connection)
                throw error
            }
        }
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

    private func checkout() async throws -> (PostgresConnection, reused: Bool) {
        while true {
            switch try await pool.acquire() {
            case .idle(let connection):
                // Cheap and non-blocking: notices a server that closed the socket meanwhile.
                if connection.probeIdle() { return (connection, true) }
                connection.close()
                await pool.release(connection)
            case .openNew:
                do {
                    let connection = try await PostgresConnection.connect(url: configuration.url, executor: executor, readiness: readiness)
                    return (connection, false)
                } catch {
                    await pool.openFailed()
                    throw error
                }
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

/// The pool's bookkeeping; connecting happens outside the actor so it never blocks it.
actor ConnectionPool {
    enum Lease {
        case idle(PostgresConnection)
        case openNew
    }

    private let maximum: Int
    private let checkoutTimeout: Duration?
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Lease, any Error>)] = []
    private var nextWaiterID: UInt64 = 0
    private var closed = false

    init(maximum: Int, checkoutTimeout: Duration? = nil) {
        self.maximum = max(1, maximum)
        self.checkoutTimeout = checkoutTimeout
    }

    func acquire() async throws -> Lease {
        guard !closed else { throw PostgresError(.poolClosed, message: "the connection pool is shut down") }
        if let connection = idle.popLast() { return .idle(connection) }
        if open < maximum {
            open += 1
            return .openNew
        }
        nextWaiterID += 1
        let id = nextWaiterID
        if let checkoutTimeout {
            Task { [weak self] in
                try? await Task.sleep(for: checkoutTimeout)
                await self?.timeOut(id)
            }
        }
        return try await withCheckedThrowingContinuation { waiters.append((id, $0)) }
    }

    /// A waiter still waiting when its time is up gives up, so a request fails fast instead
    /// of every request queueing behind an exhausted pool.
    private func timeOut(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(
            throwing: PostgresError(.poolExhausted, message: "no database connection came free in time"))
    }

    /// Takes a connection back: healthy ones go to a waiter or the idle list, broken ones
    /// (or ones left inside a transaction) are closed and their slot handed on.
    func release(_ connection: PostgresConnection) {
        let healthy = connection.isUsable && connection.transactionStatusIsIdle
        if healthy && !closed {
            if !waiters.isEmpty {
                waiters.removeFirst().continuation.resume(returning: .idle(connection))
            } else {
                idle.append(connection)
            }
            return
        }
        connection.close()
        open -= 1
        handSlotToWaiter()
    }

    func openFailed() {
        open -= 1
        handSlotToWaiter()
    }

    private func handSlotToWaiter() {
        guard !waiters.isEmpty, open < maximum else { return }
        open += 1
        waiters.removeFirst().continuation.resume(returning: .openNew)
    }

    func close() {
        closed = true
        for connection in idle { connection.close() }
        open -= idle.count
        idle.removeAll()
        for waiter in waiters {
            waiter.continuation.resume(throwing: PostgresError(.poolClosed, message: "the connection pool is shut down"))
        }
        waiters.removeAll()
    }
}
