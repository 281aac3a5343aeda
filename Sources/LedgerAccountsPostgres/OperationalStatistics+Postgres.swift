import Foundation
import LedgerAccounts
import LedgerCore
import LedgerPostgres

extension OperationalStatistics {
    /// Reads every figure in one round trip.
    public static func read(client: PostgresClient, now: Date) async throws -> OperationalStatistics {
        let rows = try await client.query(
            """
            SELECT (SELECT coalesce(last_value, 0) FROM events_global_position_seq),
                   (SELECT count(*) FROM events WHERE tx_id >= pg_snapshot_xmin(pg_current_snapshot())),
                   (SELECT count(*) FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL),
                   (SELECT count(*) FROM outbox WHERE failed_at IS NOT NULL),
                   (SELECT count(*) FROM accounts WHERE purge_after <= $1),
                   (SELECT count(*) FROM subject_keys WHERE destroyed_at IS NOT NULL)
            """,
            [.timestamp(now)])
        var statistics = OperationalStatistics()
        let row = rows[0]
        statistics.eventPosition = try row.int(0) ?? 0
        statistics.feedHeldBack = try row.int(1) ?? 0
        statistics.outboxBacklog = try row.int(2) ?? 0
        statistics.outboxFailed = try row.int(3) ?? 0
        statistics.purgeDue = try row.int(4) ?? 0
        statistics.purged = try row.int(5) ?? 0
        return statistics
    }
}
