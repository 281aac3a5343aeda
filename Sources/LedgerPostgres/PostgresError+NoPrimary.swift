import Foundation

extension PostgresError {
    /// What libpq says of a host that can commit nothing: nothing listens there (refused, no
    /// socket), or the server is a standby or not open for work. A host that timed out, could not
    /// be routed to or resolved says nothing of the kind: a primary may run there, out of this
    /// process's reach (a network partition).
    static let cannotCommitHere = [
        "connection refused", "no such file or directory", "session is read-only", "server is in hot standby mode",
        "the database system is starting up", "the database system is in recovery mode",
        "the database system is not yet accepting connections",
    ]

    /// Whether this failure to open a connection to a URL of `hosts` hosts shows that none of them
    /// can commit: every line libpq wrote names a connection attempt (an unresolvable name or a
    /// bad address has a line of its own, which disqualifies), there is an attempt for every
    /// host, and each refused the connection or answered as a standby. "Shutting down" does not
    /// count: a smart shutdown lets open sessions commit. This is libpq's view from this process:
    /// a firewall that rejects, or a proxy in front that is down, looks the same
    /// (docs/operations.md "High availability on Patroni" says what bounds the renewal it allows).
    public func showsNoServerCanCommit(hosts: Int) -> Bool {
        guard code == .connectionFailed else { return false }
        var text = message
        if let colon = text.range(of: "cannot connect to PostgreSQL: ") { text = String(text[colon.upperBound...]) }
        // Hint lines start with a tab ("\tIs the server running on that host…?").
        let lines = text.lowercased().split(separator: "\n").filter { !$0.hasPrefix("\t") && !$0.allSatisfy(\.isWhitespace) }
        let attempts = lines.filter { $0.hasPrefix("connection to server") }
        return attempts.count == lines.count && attempts.count >= max(1, hosts)
            && attempts.allSatisfy { attempt in Self.cannotCommitHere.contains { attempt.contains($0) } }
    }
}
