import LedgerPostgres
import LedgerServer

extension LedgerConfiguration {
    /// The service's pool on `url` (the primary, or the standby the readers use), sized and
    /// bounded by `LEDGER_DB_MAX_CONNECTIONS`, `LEDGER_DB_POOL_TIMEOUT_SECONDS` and
    /// `LEDGER_DB_MAX_WAITERS`.
    public func databasePool(url: String) -> PostgresClient {
        PostgresClient(
            configuration: .init(
                url: url, maximumConnections: databaseMaxConnections, checkoutTimeout: .seconds(databasePoolTimeoutSeconds),
                maximumWaiters: databaseMaxWaiters))
    }
}
