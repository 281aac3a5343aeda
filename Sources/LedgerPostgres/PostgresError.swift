/// A failure talking to PostgreSQL, typed by what a caller can do about it.
///
/// Like postgres-nio's `PSQLError`: a struct with a nested `Code`, the server's SQLSTATE when
/// there is one, and its message. Messages come from the server or from libpq and never carry
/// parameter values, since parameters are always bound.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Base: String, Sendable {
            case connectionFailed = "connection_failed"
            case connectionLost = "connection_lost"
            case uniqueViolation = "unique_violation"
            case serializationFailure = "serialization_failure"
            case deadlockDetected = "deadlock_detected"
            case lockTimeout = "lock_timeout"
            case queryCanceled = "query_canceled"
            case raisedException = "raised_exception"
            case server = "server"
            case decoding = "decoding"
            case poolClosed = "pool_closed"
            case poolExhausted = "pool_exhausted"
            case readOnlyServer = "read_only_server"
        }

        let base: Base
        private init(_ base: Base) { self.base = base }

        /// A new connection could not be opened.
        public static let connectionFailed = Code(.connectionFailed)
        /// An open connection broke (server restart, network, admin shutdown).
        public static let connectionLost = Code(.connectionLost)
        /// SQLSTATE 25006: a write reached a server that is read-only, such as a primary demoted
        /// by a failover while the connection stayed open. The connection is dropped.
        public static let readOnlyServer = Code(.readOnlyServer)
        /// SQLSTATE 23505.
        public static let uniqueViolation = Code(.uniqueViolation)
        /// SQLSTATE 40001: retry the transaction.
        public static let serializationFailure = Code(.serializationFailure)
        /// SQLSTATE 40P01: retry the transaction.
        public static let deadlockDetected = Code(.deadlockDetected)
        /// SQLSTATE 55P03.
        public static let lockTimeout = Code(.lockTimeout)
        /// SQLSTATE 57014 (statement timeout or cancel).
        public static let queryCanceled = Code(.queryCanceled)
        /// An application error raised by our own SQL functions (SQLSTATE class `LA`).
        public static let raisedException = Code(.raisedException)
        /// Any other error the server reported.
        public static let server = Code(.server)
        /// A result could not be read as the type asked for.
        public static let decoding = Code(.decoding)
        /// The pool was shut down.
        public static let poolClosed = Code(.poolClosed)
        /// No connection came free within the pool's checkout timeout.
        public static let poolExhausted = Code(.poolExhausted)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// The five-character SQLSTATE when the server sent one.
    public let sqlState: String?
    public let message: String
    /// The server's DETAIL field, when given. Never part of `description`: a unique violation's
    /// detail quotes the conflicting row ("Key (email_normalized)=(…) already exists"), and
    /// descriptions reach logs.
    public let detail: String?
    /// The constraint a violation names, when given.
    public let constraint: String?
    /// Raised by a statement queued before the one the caller awaited (`PostgresConnection.queue`)
    /// and not translated where it was queued: a translator meant for the awaited statement's
    /// own errors must let it pass as it is.
    public internal(set) var raisedByQueuedStatement = false

    public init(
        _ code: Code, sqlState: String? = nil, message: String, detail: String? = nil, constraint: String? = nil
    ) {
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.constraint = constraint
    }

    /// True for errors after which the whole transaction may simply be run again.
    public var isTransient: Bool {
        code == .serializationFailure || code == .deadlockDetected
    }

    public var description: String {
        var text = "PostgresError(\(code)"
        if let sqlState { text += ", \(sqlState)" }
        text += "): \(message)"
        if let constraint { text += " [\(constraint)]" }
        return text
    }

    /// Maps a SQLSTATE to the code callers switch on.
    static func code(forSQLState state: String) -> Code {
        switch state {
        case "23505": return .uniqueViolation
        case "40001": return .serializationFailure
        case "40P01": return .deadlockDetected
        case "55P03": return .lockTimeout
        case "57014": return .queryCanceled
        case "57P01", "57P02", "57P03": return .connectionLost
        case "25006": return .readOnlyServer
        default:
            if state.hasPrefix("08") { return .connectionLost }
            if state.hasPrefix("LA") { return .raisedException }
            return .server
        }
    }
}
