import Foundation
import LedgerAccounts
import LedgerPostgres

/// The transactional outbox table.
public enum Outbox {
    /// Withdraws the parked revocations of `accountID` for a grant, not sent yet, inside the
    /// caller's transaction: a token of that grant was kept.
    static func withdrawParkedRevocations(ofGrant grant: String, accountID: UUID, on connection: PostgresConnection) {
        connection.queue(
            """
            DELETE FROM outbox WHERE account_id = $1 AND channel = 'provider' AND delivered_at IS NULL AND failed_at IS NULL
              AND details IS NOT NULL AND details::jsonb ->> 'grant' = $2
            """, [.uuid(accountID), .text(grant)])
    }

    /// Writes a message inside the caller's transaction, due at once (or at its `notBefore`). The row is queued on the
    /// connection and goes out with the transaction's next statement.
    static func enqueue(_ message: OutboxMessage, accountID: UUID?, at time: Date, on connection: PostgresConnection) {
        connection.queue(
            """
            INSERT INTO outbox (id, account_id, channel, recipient, template, code, token, link, locale, created_at, next_attempt_at,
                                details, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $12, $11, $13)
            """,
            [
                .uuid(message.id), accountID.map { .uuid($0) } ?? .null, .text(message.channel.rawValue), .text(message.to),
                .text(message.template), message.code.map { .text($0) } ?? .null, message.token.map { .text($0) } ?? .null,
                message.link.map { .text($0) } ?? .null, .text(message.locale), .timestamp(time),
                (try? message.details.map { .text(String(decoding: try JSONEncoder().encode($0), as: UTF8.self)) }) ?? .null,
                .timestamp(message.notBefore ?? time), message.expiresAt.map { .timestamp($0) } ?? .null,
            ])
    }
}
