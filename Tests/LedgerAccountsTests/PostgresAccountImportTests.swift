import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerTestSupport
import Testing

/// The import's store on PostgreSQL: a transaction a batch, a savepoint a record, the
/// `(source, external_id)` record, and concurrent imports of the same file.
@Suite("Import: on PostgreSQL", .timeLimit(.minutes(5)))
struct PostgresAccountImportTests {
    static func importer(
        _ store: EventStore, clock: any LedgerClock, statistics: ImportWriteStatistics = ImportWriteStatistics()
    ) -> AccountImporter {
        AccountImporter(
            store: PostgresAccountImports(
                repository: PostgresAccountRepository(store: store, clock: clock, policies: .standard, retention: .development),
                statistics: statistics))
    }

    static func jsonLines() throws -> [ImportEntry] {
        try ImportFormat.jsonl.entries(try ImportFixtures.data("users.jsonl"))
    }

    @Test("each record becomes an account whose events and projections sign-in reads; the same file again is all skipped")
    func importsAndSkips() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let statistics = ImportWriteStatistics()
            let importer = Self.importer(store, clock: db.clock, statistics: statistics)
            let lines = try await importer.importBatch(try Self.jsonLines(), options: .init(source: "jsonl"))
            #expect(lines.filter { $0.outcome == .imported }.count == 4)
            #expect(statistics.recordsTakenOneByOne == 0, "a clean batch is written together")
            // Each its own `usr_…`, though one batch at one instant made them all.
            let publicIDs = Set(lines.filter { $0.outcome == .imported }.compactMap(\.accountID).map(PublicUserID.init(accountID:)))
            #expect(publicIDs.count == 4)
            let django = try #require(lines.first { $0.externalID == "jl-django" }?.accountID)
            #expect(
                try await store.readStream(django).map(\.type) == [
                    "account.imported", "account.registered", "password.set", "email.verified", "handle.claimed",
                ])
            // The chains written together verify as any append's do, and so does the whole store.
            let verified = try await store.verifyAll()
            #expect(verified.streams == 4 && verified.failures.isEmpty)
            let outboxRows = try await db.client.query("SELECT count(*) FROM outbox")
            #expect(outboxRows[0].string(0) == "0", "an imported account gets no message")
            // Sign-in reads the projection: the Django hash checks, and the service's scrypt replaces it.
            let accounts = AccountService(environment: try db.accountsEnvironment(store))
            let password = try #require(ImportFixtures.passwords["jl-django"])
            _ = try await accounts.signIn(email: "django@jl.example", password: password, device: "test")
            #expect(try await store.readStream(django).map(\.type).suffix(2) == ["password.rehashed", "session.started"])
            _ = try await accounts.signIn(email: "django@jl.example", password: password, device: "test")
            let again = try await importer.importBatch(try Self.jsonLines(), options: .init(source: "jsonl"))
            #expect(again.filter { $0.outcome == .skipped }.map(\.accountID) == lines.filter { $0.outcome == .imported }.map(\.accountID))
            #expect(again.filter { $0.outcome == .imported }.isEmpty)
            let kept = try await db.client.query("SELECT count(*) FROM account_imports")
            #expect(kept[0].string(0) == "4")
        }
    }

    @Test("a record a claim refuses is left out alone: the batch's others commit, and its own events are gone")
    func savepoints() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let accounts = AccountService(environment: try db.accountsEnvironment(store))
            _ = try await accounts.signUp(
                email: "taken@example.org", password: "violet-harbor-91", displayName: nil, handle: nil, device: "t")
            let before = try await db.client.query("SELECT count(*) FROM events")
            let entries: [ImportEntry] = [
                .record(.init(externalID: "a", email: "first@example.org")),
                .record(.init(externalID: "b", email: "TAKEN@example.org")),
                .record(.init(externalID: "c", email: "first@example.org")),
                .record(.init(externalID: "d", email: "third@example.org", displayName: "bad\u{0}name")),
                .record(.init(externalID: "e", email: "fifth@example.org", phone: "+995599000111", phoneVerified: true)),
                .record(.init(externalID: "f", email: "sixth@example.org", phone: "+995599000111", phoneVerified: true)),
                .record(.init(externalID: "a", email: "again@example.org")),
            ]
            let lines = try await Self.importer(store, clock: db.clock).importBatch(entries, options: .init(source: "crm"))
            #expect(lines.map(\.outcome.rawValue) == ["imported", "refused", "refused", "refused", "imported", "refused", "skipped"])
            #expect(lines.map(\.reason) == [nil, .emailTaken, .emailTaken, .invalidRecord, nil, .phoneTaken, nil])
            #expect(lines[6].accountID == lines[0].accountID, "the same id twice in a file is one account")
            let after = try await db.client.query("SELECT count(*) FROM events")
            #expect(Int(after[0].string(0) ?? "") == Int(before[0].string(0) ?? "")! + 2 * 4 - 1, "two accounts: 3 and 4 events")
        }
    }

    @Test("a dry run checks against the database and writes nothing")
    func dryRun() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let lines = try await Self.importer(store, clock: db.clock).importBatch(
                try Self.jsonLines(), options: .init(source: "jsonl", dryRun: true))
            #expect(lines.filter { $0.outcome == .imported }.count == 4)
            for table in ["events", "accounts", "account_imports"] {
                let rows = try await db.client.query("SELECT count(*) FROM \(table)")
                #expect(rows[0].string(0) == "0", "\(table)")
            }
        }
    }

    @Test("two imports of the same records at once bring each person in once")
    func concurrentImports() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let entries = (0..<200).map { ImportEntry.record(.init(externalID: "p\($0)", email: "p\($0)@example.org")) }
            let importer = Self.importer(store, clock: db.clock)
            async let first = importer.importBatch(entries, options: .init(source: "crm"))
            async let second = importer.importBatch(entries.reversed(), options: .init(source: "crm"))
            let results = try await first + second
            #expect(results.filter { $0.outcome == .imported }.count == 200)
            #expect(results.filter { $0.outcome == .skipped }.count == 200)
            let accounts = try await db.client.query("SELECT count(*) FROM accounts")
            #expect(accounts[0].string(0) == "200")
        }
    }

    @Test("when the batch's write meets a claim its check did not see, each record goes on its own savepoint, and all land")
    func fallsBackOneByOne() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let imports = PostgresAccountImports(
                repository: PostgresAccountRepository(store: store, clock: db.clock, policies: .standard, retention: .development))
            let handle = try #require(Handle("user_000000000042"))
            func account(_ id: String) -> AccountCommand.ImportedAccount {
                .init(source: "crm", externalID: id, email: EmailAddress("\(id)@example.org"), handle: handle)
            }
            // Handles are drawn at random and not checked before the write: two the same is that claim.
            let results = try await imports.importBatch([account("h1"), account("h2"), account("h3")], dryRun: false)
            #expect(results.allSatisfy { if case .imported = $0 { true } else { false } }, "\(results)")
            #expect(imports.statistics.recordsTakenOneByOne == 3)
            let handles = try await db.client.query("SELECT count(DISTINCT handle_normalized) FROM accounts")
            #expect(handles[0].string(0) == "3")
            #expect(try await db.client.query("SELECT count(*) FROM account_imports")[0].string(0) == "3")
            let ids = results.compactMap { if case .imported(let id) = $0 { id } else { nil } }
            #expect(Set(ids.map(PublicUserID.init(accountID:))).count == 3, "each record on its own savepoint, its own usr_…")
        }
    }

    @Test("on PostgreSQL: a deleted account's address in its cooldown is identifier_held; a refused record takes no claim from a later one")
    func cooldownAndOrder() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let accounts = AccountService(environment: try db.accountsEnvironment(store))
            _ = try await accounts.signUp(
                email: "taken@example.org", password: "violet-harbor-91", displayName: nil, handle: nil, device: "t")
            try await db.client.query(
                "INSERT INTO signup_cooldowns (key_hmac, account_id, until, reason) VALUES ($1, $2, $3, 'deleted')",
                [
                    .bytea(Retention.development.key(.email("gone@example.org"))), .uuid(UUID()),
                    .timestamp(db.clock.now().addingTimeInterval(86_400)),
                ])
            let entries: [ImportEntry] = [
                .record(.init(externalID: "a", email: "gone@example.org")),
                .record(.init(externalID: "b", email: "taken@example.org", phone: "+995599000222", phoneVerified: true)),
                .record(.init(externalID: "c", email: "c@example.org", phone: "+995599000222", phoneVerified: true)),
            ]
            let lines = try await Self.importer(store, clock: db.clock).importBatch(entries, options: .init(source: "crm"))
            #expect(lines.map(\.reason) == [.identifierHeld, .emailTaken, nil])
        }
    }
}
