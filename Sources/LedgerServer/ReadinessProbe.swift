import Foundation
import LedgerEventStore
import LedgerPostgres

/// Whether this instance can serve: the database answers and its schema is the one the
/// binary's migration files describe.
public struct ReadinessProbe: Sendable {
    let client: PostgresClient
    let migrator: SchemaMigrator
    /// The readers' database (`LEDGER_READ_DATABASE_URL`), when it is not `client`'s.
    let readClient: PostgresClient?

    public init(client: PostgresClient, migrator: SchemaMigrator, readClient: PostgresClient? = nil) {
        self.client = client
        self.migrator = migrator
        self.readClient = readClient
    }

    /// How far the readers' standby is behind the primary: WAL bytes not yet replayed, and the
    /// age of the last transaction it replayed (large on an idle primary); nil without a standby
    /// or when it cannot be read.
    public func replicationLag() async -> (bytes: Int64, seconds: Double?)? {
        guard let readClient,
            let primary = try? await client.query("SELECT pg_current_wal_lsn()::text"), let lsn = primary.rows.first?.string(0),
            let standby = try? await readClient.query(
                """
                SELECT pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn())::int8,
                       extract(epoch FROM now() - pg_last_xact_replay_timestamp())::text
                """, [.text(lsn)]),
            let row = standby.rows.first, let bytes = try? row.int(0)
        else { return nil }
        return (max(0, bytes), row.string(1).flatMap(Double.init))
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
