import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// What the HTTP tests read besides the API: the messages the service queued (the codes and
/// links a user would receive) and the clock they move. A PostgreSQL test database reads its
/// outbox table; `MemoryBackend` the in-memory repository's outbox.
protocol TestBackend: Sendable {
    var clock: ManualClock { get }
    /// The newest queued message of `template` (to `recipient` when given): (recipient, code, token).
    func newestMessage(template: String, to recipient: String?) async throws -> QueuedMessage?
    /// How many events are stored (accounts' and code requests'), of `type` when given: a
    /// refused request adds none.
    func storedEventCount(type: String?) async throws -> Int
    /// Every queued message (of `template` when given), oldest first.
    func queuedMessages(template: String?) async throws -> [QueuedMessage]
    /// How many accounts exist (deleted ones included).
    func accountCount() async throws -> Int
    /// Every session of every account, live or ended.
    func sessions() async throws -> [SessionRow]
    /// How many links of `purpose` (`email_change`, …) are neither used nor ended.
    func unusedLinkCount(purpose: String) async throws -> Int
}

/// A session as a test looks at it.
struct SessionRow: Sendable {
    /// The account's email, when it has one.
    let accountEmail: String?
    let live: Bool
    let revokedReason: String?
}

extension TestBackend {
    func storedEventCount() async throws -> Int { try await storedEventCount(type: nil) }
}

/// A message as the outbox holds it, with what a test takes from it.
struct QueuedMessage: Sendable {
    let to: String
    let code: String?
    let token: String?
    var link: String? = nil
    var details: [String: String]? = nil
    var locale: String? = nil
    var channel: String? = nil
}

extension TestDatabase: TestBackend {
    func storedEventCount(type: String?) async throws -> Int {
        let rows = try await client.query(
            "SELECT count(*) FROM events WHERE $1::text IS NULL OR event_type = $1", [type.map { .text($0) } ?? .null])
        return Int(try rows[0].int(0) ?? 0)
    }

    func queuedMessages(template: String?) async throws -> [QueuedMessage] {
        let rows = try await client.query(
            """
            SELECT recipient, code, token, link, details, locale, channel FROM outbox WHERE $1::text IS NULL OR template = $1
            ORDER BY created_at, xmin::text::bigint
            """, [template.map { .text($0) } ?? .null])
        return try rows.rows.map { row in
            QueuedMessage(
                to: row.string(0) ?? "", code: row.string(1), token: row.string(2), link: row.string(3),
                details: try row.string(4).map { try JSONDecoder().decode([String: String].self, from: Data($0.utf8)) },
                locale: row.string(5), channel: row.string(6))
        }
    }

    func sessions() async throws -> [SessionRow] {
        let rows = try await client.query(
            "SELECT a.email, s.revoked_at IS NULL, s.revoked_reason FROM sessions s JOIN accounts a USING (account_id)")
        return try rows.rows.map { SessionRow(accountEmail: $0.string(0), live: try $0.bool(1) ?? false, revokedReason: $0.string(2)) }
    }

    func unusedLinkCount(purpose: String) async throws -> Int {
        let rows = try await client.query("SELECT count(*) FROM email_links WHERE purpose = $1 AND used_at IS NULL", [.text(purpose)])
        return Int(try rows[0].int(0) ?? 0)
    }

    func accountCount() async throws -> Int {
        Int(try await client.query("SELECT count(*) FROM accounts")[0].int(0) ?? 0)
    }

    func newestMessage(template: String, to recipient: String?) async throws -> QueuedMessage? {
        let rows = try await client.query(
            // Newest by time, then by transaction (the tests' clock often stands still).
            """
            SELECT recipient, code, token, locale FROM outbox WHERE template = $1 AND ($2::text IS NULL OR recipient = $2)
            ORDER BY created_at DESC, xmin::text::bigint DESC LIMIT 1
            """, [.text(template), recipient.map { .text($0) } ?? .null])
        guard rows.rowCount == 1 else { return nil }
        return QueuedMessage(to: rows[0].string(0) ?? "", code: rows[0].string(1), token: rows[0].string(2), locale: rows[0].string(3))
    }
}
