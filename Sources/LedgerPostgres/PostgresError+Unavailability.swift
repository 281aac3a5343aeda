import LedgerCore

extension PostgresError: TemporaryUnavailability {
    /// A connection that failed or was lost, a server that no longer takes writes (a failover
    /// under way), or a pool with no connection to lend: the database is there again in a
    /// moment; a query's own error is not.
    public var isTemporarilyUnavailable: Bool {
        code == .connectionFailed || code == .connectionLost || code == .poolExhausted || code == .readOnlyServer
    }

    /// A pool with no connection to lend is busy, not away.
    public var isSaturated: Bool { code == .poolExhausted }

    /// The server ended the session with a FATAL error of its own (an operator's or a shutdown's
    /// 57P0x), rather than the socket just closing.
    public var serverEndedSession: Bool {
        sqlState?.hasPrefix("57P") == true || message.hasPrefix("FATAL:")
    }
}
