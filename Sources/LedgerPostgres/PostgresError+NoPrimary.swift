import Foundation

extension PostgresError {
    /// What libpq says of a host that can commit nothing: nothing listens there (refused, no
    /// socket), or the server is a standby or not open for work. A host that timed out or could
    /// not be routed to says nothing of the kind: a primary may run there, out of this process's
    /// reach (a network partition).
    static let cannotCommitHere = [
        "connection refused", "no such file or directory", "session is read-only", "server is in hot standby mode",
        "the database system is starting up", "the database system is shutting down",
        "the database system is in recovery mode", "the database system is not yet accepting connections",
    ]

    /// Whether this failure to open a connection shows that no server it tried can commit: libpq
    /// names every host it tried, and each refused the connection or answered as a standby. Then
    /// nothing commits on any host the URL lists (docs/operations.md "High availability on
    /// Patroni": list every node), which is what lets `StandbyMonitor` keep reading a standby
    /// that has everything the primary was last seen with.
    public var showsNoServerCanCommit: Bool {
        guard code == .connectionFailed else { return false }
        let attempts = message.lowercased().components(separatedBy: "connection to server").dropFirst()
        return !attempts.isEmpty
            && attempts.allSatisfy { attempt in Self.cannotCommitHere.contains { attempt.contains($0) } }
    }
}
