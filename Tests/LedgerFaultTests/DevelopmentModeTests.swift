import Foundation
import LedgerCrypto
import LedgerTestSupport
import Testing

@Suite("ledger serve: development mode and the master key", .timeLimit(.minutes(10)))
struct DevelopmentModeTests {
    @Test("without LEDGER_MASTER_KEY, serve refuses to start, unless --dev: then it migrates and seals with the development key")
    func devFlag() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let server = try ServerUnderTest(databaseURL: db.url, environment: ["LEDGER_MASTER_KEY": ""])
            let (status, output) = try await server.ledger(["serve", "--host", "127.0.0.1"])
            #expect(status != 0)
            #expect(output.contains("set LEDGER_MASTER_KEY"))
            #expect(output.contains("--dev"))
            try await server.startServingOneSignUp(["--dev"])
            #expect(server.process?.output.contains("DEVELOPMENT MODE (--dev)") == true)
            // `ledger` runs in this process's directory, where --dev keeps its key.
            let saved = try String(contentsOfFile: ".ledger/dev-master-key", encoding: .utf8)
            let developmentKey = try MasterKey(base64: saved.trimmingCharacters(in: .whitespacesAndNewlines))
            let keyIDs = try await db.client.query("SELECT DISTINCT master_key_id FROM subject_keys")
            #expect(keyIDs.rowCount == 1)
            #expect(keyIDs[0].string(0) == developmentKey.keyID)
        }
    }

    @Test("serve exits non-zero with one line naming the cause when it cannot listen (its port taken); SIGTERM is a clean 0")
    func cannotListen() async throws {
        try await TestPostgres.withDatabase { db in
            let first = try ServerUnderTest(databaseURL: db.url)
            try await first.start()
            // The same port again: the second cannot listen.
            let (status, output) = try await first.ledger(["serve", "--host", "127.0.0.1"])
            #expect(status == 1, "\(output)")
            let lines = output.split(separator: "\n").filter { $0.contains("cannot serve") }
            #expect(lines.count == 1, "\(output)")
            #expect(lines.first?.contains("127.0.0.1:\(first.port) is already in use by another process") == true, "\(output)")
            #expect(!output.contains("Usage:"))
            // A graceful stop is a success.
            let process = try #require(first.process)
            await process.kill(SIGTERM)
            #expect(process.waitForExit() == 0, "\(process.output)")
            try await first.shutdown()
        }
    }

    @Test(
        "serve sets up an empty database on its first start; one holding other tables, or a schema that is behind, waits for `ledger migrate`"
    )
    func firstStart() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            // Somebody else's database (no schema_migrations, but tables): not set up unasked.
            try await db.client.query("CREATE TABLE someone_elses (id int)")
            let foreign = try ServerUnderTest(databaseURL: db.url)
            let (refused, said) = try await foreign.ledger(["serve", "--host", "127.0.0.1"])
            try await foreign.shutdown()
            #expect(refused != 0 && said.contains("migration(s) pending; run `ledger migrate`"))
            #expect(try await db.client.query("SELECT to_regclass('events') IS NULL")[0].bool(0) == true)
            try await db.client.query("DROP TABLE someone_elses")

            let server = try ServerUnderTest(databaseURL: db.url, environment: ["LOG_LEVEL": "info"])
            try await server.startServingOneSignUp()
            #expect(server.process?.output.contains("first start on an empty database: applying") == true)
            try await db.client.query("DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)")
            let behind = try ServerUnderTest(databaseURL: db.url)
            let (status, output) = try await behind.ledger(["serve", "--host", "127.0.0.1"])
            try await behind.shutdown()
            #expect(status != 0)
            #expect(output.contains("refusing to start: 1 migration(s) pending"))
        }
    }

    @Test("outside development mode provider token endpoints are https or on loopback: http across a network is refused")
    func providerEndpoints() async throws {
        try await TestPostgres.withDatabase { db in
            let remote = try ServerUnderTest(
                databaseURL: db.url, environment: ["LEDGER_GOOGLE_TOKEN_URL": "http://oauth.example.com/token"])
            let (status, output) = try await remote.ledger(["serve", "--host", "127.0.0.1"])
            try await remote.shutdown()
            #expect(status != 0)
            #expect(output.contains("provider token endpoints must be https (or http on loopback)"))
            let local = try ServerUnderTest(
                databaseURL: db.url,
                environment: ["LEDGER_APPLE_TOKEN_URL": "http://127.0.0.1:9/token", "LEDGER_GOOGLE_REVOKE_URL": "http://[::1]:9/revoke"])
            try await local.startServingOneSignUp()
        }
    }

    @Test("outside development mode serve refuses to start with no way out for mail and texts: codes never go to a log")
    func deliveryWebhookRequired() async throws {
        try await TestPostgres.withDatabase { db in
            let server = try ServerUnderTest(databaseURL: db.url, environment: ["LEDGER_DELIVERY_WEBHOOK_URL": ""])
            let (status, output) = try await server.ledger(["serve", "--host", "127.0.0.1"])
            try await server.shutdown()
            #expect(status != 0)
            #expect(output.contains("refusing to start: no way out for emails"))
        }
    }

    @Test("SIGTERM: the API, the workers and the listener stop together as one service group, and serve exits 0")
    func gracefulShutdown() async throws {
        try await TestPostgres.withDatabase { db in
            let server = try ServerUnderTest(databaseURL: db.url, environment: ["LOG_LEVEL": "info"])
            try await server.startServingOneSignUp(["--purge"])
            let process = try #require(server.process)
            #expect(await process.exited() == 0)
            #expect(process.output.contains("stopped"))
        }
    }

    @Test("serve refuses a master key other than the one the store's data keys are wrapped by")
    func wrongMasterKey() async throws {
        try await TestPostgres.withDatabase { db in
            let server = try ServerUnderTest(databaseURL: db.url)
            try await server.startServingOneSignUp()
            let other = try ServerUnderTest(databaseURL: db.url)
            let (status, output) = try await other.ledger(["serve", "--host", "127.0.0.1"])
            try await other.shutdown()
            #expect(status != 0)
            #expect(output.contains("refusing to start: cannot unwrap the subject's data key: data key was wrapped by master key"))
            #expect(!output.contains(other.environment["LEDGER_MASTER_KEY"] ?? "-"), "the key itself must never be printed")
        }
    }
}
