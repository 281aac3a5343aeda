import Foundation
import LedgerPostgres

extension Outbox {
    /// A message given up (`ledger deliveries list --failed`): its recipient masked, and the
    /// last error with every address and number in it masked too.
    public struct FailedDelivery: Sendable, Equatable {
        public let id: UUID
        public let channel: String
        public let template: String
        public let provider: String?
        public let recipient: String?
        public let attempts: Int
        public let createdAt: Date
        public let failedAt: Date
        public let error: String?
    }

    /// The messages given up, newest first (by the index on `failed_at`).
    public static func failed(limit: Int, client: PostgresClient) async throws -> [FailedDelivery] {
        let rows = try await client.query(
            """
            SELECT id, channel, template, provider, recipient_masked, attempts, created_at, failed_at, last_error
            FROM outbox WHERE failed_at IS NOT NULL ORDER BY failed_at DESC LIMIT $1
            """,
            [.int(Int64(limit))])
        return try rows.rows.compactMap { row in
            guard let id = try row.uuid(0), let createdAt = try row.date(6), let failedAt = try row.date(7) else { return nil }
            return FailedDelivery(
                id: id, channel: row.string(1) ?? "", template: row.string(2) ?? "", provider: row.string(3), recipient: row.string(4),
                attempts: Int(try row.int(5) ?? 0), createdAt: createdAt, failedAt: failedAt, error: row.string(8))
        }
    }
}
