import LedgerPostgres

/// The only connection of a one-connection client, held by a statement until `release` (a
/// loaded machine could outlast any fixed sleep), and surely taken when `init` returns.
public struct HeldConnection {
    private let holder: Task<PostgresResult, any Error>
    private let observer: PostgresClient
    private static let holding = "FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(60)' AND datname = current_database()"

    public init(of client: PostgresClient, watchedThrough observer: PostgresClient) async throws {
        self.holder = Task { try await client.query("SELECT pg_sleep(60)") }
        self.observer = observer
        while try await observer.query("SELECT count(*) \(Self.holding) AND state = 'active'")[0].int(0) == 0 {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Ends the statement, and with it the hold.
    public func release() async throws {
        _ = try await observer.query("SELECT pg_cancel_backend(pid) \(Self.holding)")
        _ = await holder.result
    }
}
