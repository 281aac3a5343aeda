/// Why `/readyz` answers `503`: the reason to show (no secrets, no connection string) and,
/// when the database is the reason, where it stands (`database`; openapi.yaml `/readyz`).
public struct NotReady: Sendable, Equatable {
    /// `/readyz`'s `database` field.
    public enum Database: String, Sendable {
        /// Servers answer, but none accepts writes (a failover under way, every node a standby).
        case noPrimary = "no_primary"
        /// No server answers.
        case unreachable
    }

    public var reason: String
    public var database: Database?

    public init(reason: String, database: Database? = nil) {
        self.reason = reason
        self.database = database
    }
}
