import Foundation
import LedgerAccounts
import LedgerIdentity
import LedgerPostgres

/// Finds accounts by what support is told: the short public user id (`usr_…`).
public enum AccountDirectory {
    /// One account a lookup found.
    public struct Entry: Sendable, Equatable {
        public let accountID: UUID
        public let createdAt: Date?
        /// Deleted and awaiting its purge.
        public let deleted: Bool
    }

    /// Every account whose id starts with the public id's bits (almost always one): a range of
    /// the `accounts` primary key.
    public static func accounts(with publicID: PublicUserID, client: PostgresClient) async throws -> [Entry] {
        let range = publicID.accountIDs
        let rows = try await client.query(
            "SELECT account_id, created_at, deleted_at IS NOT NULL FROM accounts WHERE account_id BETWEEN $1 AND $2 ORDER BY account_id",
            [.uuid(range.lowest), .uuid(range.highest)])
        return try (0..<rows.rowCount).compactMap { index in
            guard let id = try rows[index].uuid(0) else { return nil }
            return Entry(accountID: id, createdAt: try rows[index].date(1), deleted: try rows[index].bool(2) ?? false)
        }
    }
}
