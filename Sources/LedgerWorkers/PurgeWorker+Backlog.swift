import Foundation
import LedgerPostgres

extension PurgeWorker {
    /// When the longest-waiting due purge became due (its `purge_after`); nil when none is due.
    /// One probe of the `accounts_purge_due` index, cheap enough for every tick of every instance.
    public func oldestDue() async throws -> Date? {
        let rows = try await store.client.query("SELECT min(purge_after) FROM accounts WHERE purge_after <= $1", [.timestamp(clock.now())])
        return try rows[0].date(0)
    }

    /// Purges due for more than `age` seconds: how many, and since when the oldest has been due
    /// (`serve --no-purge` warns with them at start).
    public func overdue(by age: TimeInterval) async throws -> (count: Int, oldest: Date?) {
        let rows = try await store.client.query(
            "SELECT count(*), min(purge_after) FROM accounts WHERE purge_after <= $1", [.timestamp(clock.now().addingTimeInterval(-age))])
        return (Int(try rows[0].int(0) ?? 0), try rows[0].date(1))
    }

    /// Deletions asked for (Apple's account-delete) that holds blocked and no pass has scheduled
    /// yet: each waits for its holds to lapse or be released, then for a pass with the master key.
    public func requestedDeletionsWaiting() async throws -> Int {
        let rows = try await store.client.query(
            "SELECT count(*) FROM accounts WHERE deletion_requested_at IS NOT NULL AND deleted_at IS NULL")
        return Int(try rows[0].int(0) ?? 0)
    }
}
