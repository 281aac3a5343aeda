import Foundation
import LedgerEventStore
import LedgerPostgres
import LedgerServer

/// Whether this instance can serve: the database answers and its schema is the one the
/// binary's migration files describe.
public struct ReadinessProbe: Readiness {
    let client: PostgresClient
    let migrator: SchemaMigrator
    /// The readers' standby (`LEDGER_READ_DATABASE_URL`), when there is one: whether it is read
    /// now, and why not.
    let standby: StandbyMonitor?

    public init(client: PostgresClient, migrator: SchemaMigrator, standby: StandbyMonitor? = nil) {
        self.client = client
        self.migrator = migrator
        self.standby = standby
    }

    public func standbyStatus() -> StandbyStatus? {
        standby?.status()
    }

    /// nil when ready, else the reason (safe to show: no secrets, no connection string).
    public func check() async -> String? {
        do {
            let status = try await migrator.status(client: client)
            if !status.mismatched.isEmpty { return "applied migrations differ from their files" }
            if !status.pending.isEmpty { return "migrations are pending: run `ledger migrate`" }
            return nil
        } catch let error as PostgresError {
            return "database unreachable (\(error.code))"
        } catch {
            return "database check failed"
        }
    }
}
