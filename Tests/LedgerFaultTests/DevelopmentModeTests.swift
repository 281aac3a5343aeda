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
            #expect(server.process?.output.contains("DEVELOPMENT MODE — not for production.") == true)
            // `ledger` runs in this process's directory, where --dev keeps its key.
            let saved = try String(contentsOfFile: ".ledger/dev-master-key", encoding: .utf8)
            let developmentKey = try MasterKey(base64: saved.trimmingCharacters(in: .whitespacesAndNewlines))
            let keyIDs = try await db.client.query("SELECT DISTINCT master_key_id FROM subject_keys")
            #expect(keyIDs.rowCount == 1)
            #expect(keyIDs[0].string(0) == developmentKey.keyID)
        }
    }

    @Test(
        "without a database URL serve keeps a local cluster between runs, listens on loopback, links to itself, records its messages for `ledger dev messages`, and stops without PostgreSQL's FATAL"
    )
    func developmentSetup() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-dev-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let unset = [
            "DATABASE_URL": "", "LEDGER_MASTER_KEY": "", "LEDGER_DELIVERY_WEBHOOK_URL": "", "LEDGER_LINK_BASE_URL": "", "LOG_LEVEL": "info",
        ]
        let first = try ServerUnderTest(databaseURL: "", environment: unset)
        try await first.start(host: nil, directory: directory)
        let banner = first.process?.output ?? ""
        #expect(banner.contains("DEVELOPMENT MODE — not for production."))
        #expect(banner.contains("Serving http://localhost:\(first.port) on this machine only"))
        #expect(banner.contains("./scripts/ledger keys create"))
        let signUp = try await first.send("POST", "/auth/email/signup", json: ["email": "dev@example.org", "password": "amber-orchard-44"])
        #expect(signUp.status == 201)
        // `scripts/ledger` finds the server's database and link base here.
        let settings = try String(contentsOfFile: directory + "/.ledger/dev.env", encoding: .utf8)
        #expect(
            settings.contains("DATABASE_URL=postgresql://") && settings.contains("LEDGER_LINK_BASE_URL=http://localhost:\(first.port)\n"))
        let messages = directory + "/.ledger/dev-messages.jsonl"
        let (found, link) = try await LedgerProcess.run(
            ["dev", "messages", "--to", "DEV@example.org", "--template", "verify_email", "--field", "link", "--file", messages],
            environment: [:])
        #expect(found == 0 && link.hasPrefix("http://localhost:\(first.port)/verify-email?token="), "\(link)")
        // The log names the recipient masked; the file, which only its owner reads, in full.
        #expect(first.process?.output.contains("to=d•••@example.org") == true)
        #expect(try FileManager.default.attributesOfItem(atPath: messages)[.posixPermissions] as? Int == 0o600)
        let process = try #require(first.process)
        await process.kill(SIGINT)
        #expect(process.waitForExit() == 0)
        #expect(!process.output.contains("FATAL"), "\(process.output.suffix(500))")
        try await first.shutdown()

        // The next start finds the same cluster, and the account in it.
        let second = try ServerUnderTest(databaseURL: "", environment: unset)
        try await second.start(host: nil, directory: directory)
        #expect(second.process?.output.contains("local PostgreSQL cluster reopened") == true)
        let login = try await second.send("POST", "/auth/email/login", json: ["email": "dev@example.org", "password": "amber-orchard-44"])
        #expect(login.status == 200)
        try await second.shutdown()
    }

    @Test("a configuration error is one line naming the setting, exit 2, without the usage text; no silent development mode")
    func configurationError() async throws {
        let (status, output) = try await LedgerProcess.run(["serve"], environment: ["LEDGER_PORT": "eighty"])
        #expect(status == 2, "\(output)")
        #expect(output.split(separator: "\n").count == 1 && output.contains("LEDGER_PORT"), "\(output)")
        #expect(!output.contains("Usage:"))
        // No silent fallback to development mode: a blank DATABASE_URL, or a deployment's settings without one.
        let (blank, said) = try await LedgerProcess.run(["serve"], environment: ["DATABASE_URL": " "])
        #expect(blank == 2 && said.contains("DATABASE_URL is set but empty"), "\(said)")
        // (Every other deployment setting unset, whatever this process's environment holds.)
        let deployment = [
            "DATABASE_URL": "", "LEDGER_MASTER_KEY": try MasterKey.generate().base64, "LEDGER_DELIVERY_WEBHOOK_URL": "",
            "LEDGER_SMTP_URL": "", "LEDGER_TWILIO_ACCOUNT_SID": "", "LEDGER_READ_DATABASE_URL": "",
        ]
        let (forgotten, told) = try await LedgerProcess.run(["serve"], environment: deployment)
        #expect(forgotten == 2 && told.contains("DATABASE_URL is not set while a deployment's settings are (LEDGER_MASTER_KEY)"), "\(told)")
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

    @Test("serve refuses a DATABASE_URL naming several hosts unless it asks for the primary: writes could land on a standby")
    func multiHostNeedsReadWrite() async throws {
        try await TestPostgres.withDatabase { db in
            let url = try #require(URLComponents(string: db.url))
            let port = try #require(url.port)
            let hosts = "postgresql://postgres@127.0.0.1:\(port),127.0.0.1:\(port)\(url.path)"
            let server = try ServerUnderTest(databaseURL: hosts + "?target_session_attrs=any")
            let (status, output) = try await server.ledger(["serve", "--host", "127.0.0.1"])
            try await server.shutdown()
            #expect(status != 0)
            #expect(output.contains("DATABASE_URL names 2 hosts with target_session_attrs=any"))
            let primary = try ServerUnderTest(databaseURL: hosts + "?target_session_attrs=read-write")
            try await primary.startServingOneSignUp()
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
