import Foundation
import Hummingbird
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import Testing

// The HTTP tests' PostgreSQL side: the services and apps on a test database, and what the
// tests read of its tables. Only the suites of the store, the feed, races across connections
// and faults use it; the others run on `MemoryBackend`.

/// Builds the real router on a database for one test.
func makeServices(
    url: String, client: PostgresClient, clock: ManualClock = ManualClock(), masterKey: MasterKey? = nil,
    readClient: PostgresClient? = nil, configure: (inout LedgerConfiguration) -> Void = { _ in }
) throws -> LedgerServices {
    var configuration = LedgerConfiguration()
    configuration.databaseURL = url
    configuration.policies.scryptLogN = 4
    configure(&configuration)
    let key = try masterKey ?? .generate()
    let store = EventStore(client: client, keyring: SubjectKeyring(masterKey: key), clock: clock)
    return try LedgerServices(
        configuration: configuration, client: client, eventStore: store,
        migrator: try SchemaMigrator(directory: TestPostgres.schemaDirectory), clock: clock, masterKey: key,
        readClient: readClient)
}

/// The router over a test database with the configuration's defaults.
func testApp(_ db: TestDatabase) throws -> some ApplicationProtocol {
    Application(router: buildRouter(try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)))
}

/// The API on a test database, as `configure` sets it up. `behindProxy` trusts the loopback
/// as a proxy, so a test names each request's client with `X-Forwarded-For`.
func testApplication(
    _ db: TestDatabase, behindProxy: Bool = false, configure: (inout LedgerConfiguration) -> Void = { _ in }
) throws -> some ApplicationProtocol {
    Application(
        router: buildRouter(
            try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                if behindProxy { $0.trustedProxies = ["127.0.0.1/32", "::1/128"] }
                configure(&$0)
            }))
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
