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

    /// nil when ready, else why not (safe to show: no secrets, no connection string).
    public func check() async -> NotReady? {
        do {
            let status = try await migrator.status(client: client)
            if !status.mismatched.isEmpty { return NotReady(reason: "applied migrations differ from their files") }
            if !status.pending.isEmpty { return NotReady(reason: "migrations are pending: run `ledger migrate`") }
            return nil
        } catch let error as PostgresError where error.isSaturated {
            // Busy, not away: no connection came free in time, which says nothing of the primary.
            return NotReady(reason: "the database pool is saturated (\(error.code))")
        } catch let error as PostgresError where error.isTemporarilyUnavailable {
            if await Self.noPrimary(error, standby: standby?.route.standby) {
                return NotReady(reason: "no database server accepts writes now", database: .noPrimary)
            }
            return NotReady(reason: "database unreachable (\(error.code))", database: .unreachable)
        } catch let error as PostgresError {
            return NotReady(reason: "database unreachable (\(error.code))")
        } catch {
            return NotReady(reason: "database check failed")
        }
    }

    /// Whether the primary is missing while servers answer: the one reached is read-only (a
    /// demoted primary; libpq's `target_session_attrs=read-write` finding only standbys says so
    /// too), or the readers' standby still answers.
    static func noPrimary(_ error: PostgresError, standby: PostgresClient?) async -> Bool {
        if error.code == .readOnlyServer { return true }
        let message = error.message.lowercased()
        if message.contains("read-only") || message.contains("hot standby") { return true }
        guard let standby else { return false }
        return (try? await standby.query("SELECT pg_is_in_recovery()"))?.rows.first?.string(0) == "t"
    }
}
