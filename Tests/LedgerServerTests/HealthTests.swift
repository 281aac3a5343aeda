import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import Testing

@Suite("Operations endpoints")
struct HealthTests {
    @Test("healthz and readyz answer JSON; the request id is echoed or generated")
    func healthAndReady() async throws {
        try await TestPostgres.withDatabase { db in
            let app = Application(router: buildRouter(try makeServices(url: db.url, client: db.client)))
            try await app.test(.router) { client in
                try await client.execute(uri: "/healthz", method: .get, headers: [HTTPField.Name("X-Request-Id")!: "req-42"]) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[HTTPField.Name("X-Request-Id")!] == "req-42")
                    #expect(response.headers[.contentType] == "application/json; charset=utf-8")
                    #expect(String(buffer: response.body) == #"{"status":"ok"}"#)
                }
                try await client.execute(uri: "/readyz", method: .get) { response in
                    #expect(response.status == .ok)
                    let id = response.headers[HTTPField.Name("X-Request-Id")!]
                    #expect(id?.isEmpty == false)
                }
                try await client.execute(uri: "/readyz", method: .get, headers: [HTTPField.Name("X-Request-Id")!: "bad id\u{7f}"]) {
                    response in
                    #expect(response.headers[HTTPField.Name("X-Request-Id")!] != "bad id\u{7f}")
                }
            }
        }
    }

    @Test("a read database that is not a standby, or cannot be reached, is not read: /readyz stays ready and says why")
    func standbyBypassed() async throws {
        try await TestPostgres.withDatabase { db in
            // A database that replays no log (here the primary itself): nothing bounds how far it is from the primary.
            let itself = try makeServices(url: db.url, client: db.client, readClient: db.client)
            let notStandby = try #require(await itself.standbyMonitor?.sample())
            #expect(notStandby.readingFrom == .primary && notStandby.reason == .notAStandby)

            let unreachable = PostgresClient(configuration: .init(url: "postgresql://127.0.0.1:1/ledger", maximumConnections: 1))
            let services = try makeServices(url: db.url, client: db.client, readClient: unreachable)
            let monitor = try #require(services.standbyMonitor)
            #expect(await monitor.sample().reason == .standbyUnreachable)
            #expect(services.readStore.client === db.client)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let ready = try await call(client, .get, "/readyz")
                let replication = try #require(ready.body["replication"] as? [String: Any])
                #expect(ready.status == .ok && replication["reading_from"] as? String == "primary")
                #expect(replication["reason"] as? String == "standby_unreachable" && replication["max_lag_seconds"] as? Int == 10)
                #expect(replication["lag_seconds"] is NSNull && replication["lag_bytes"] is NSNull)
            }
            await unreachable.shutdown()
        }
    }

    @Test("unknown paths answer 404 in the API's error shape")
    func notFound() async throws {
        try await TestPostgres.withDatabase { db in
            let app = Application(router: buildRouter(try makeServices(url: db.url, client: db.client)))
            try await app.test(.router) { client in
                try await client.execute(uri: "/no/such/thing", method: .get) { response in
                    #expect(response.status == .notFound)
                    let body = try JSONDecoder().decode([String: String].self, from: Data(buffer: response.body))
                    #expect(body["error"] == "not_found")
                    #expect(body["message"]?.isEmpty == false)
                }
            }
        }
    }

    @Test("readyz is unready while migrations are pending")
    func pendingMigrations() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let app = Application(router: buildRouter(try makeServices(url: db.url, client: db.client)))
            try await app.test(.router) { client in
                try await client.execute(uri: "/readyz", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    let body = try JSONDecoder().decode([String: String].self, from: Data(buffer: response.body))
                    #expect(body["error"] == "not_ready")
                }
            }
        }
    }

    /// The service keeps running while PostgreSQL restarts: readyz goes unready, then ready,
    /// and appends succeed again with the same pool, without restarting anything.
    @Test("PostgreSQL restarted under a running server: unready, then ready again", .timeLimit(.minutes(10)))
    func postgresRestart() async throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ledger-restart-\(UUID().uuidString)")
        let cluster = try await LocalCluster.start(directory: directory, database: "ledger", durable: false)
        defer { cluster.stop() }
        let client = PostgresClient(configuration: .init(url: cluster.url, maximumConnections: 4))
        let services = try makeServices(url: cluster.url, client: client)
        try await services.migrator.migrate(client: client)
        let app = Application(router: buildRouter(services))
        try await app.test(.router) { http in
            try await http.execute(uri: "/readyz", method: .get) { #expect($0.status == .ok) }
            try await services.eventStore.append(
                to: UUID(), streamType: "test", subjectID: nil, expected: .any,
                events: [NewEvent(type: "test.before", payload: [])])

            try cluster.stopServer()
            try await http.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(String(buffer: response.body).contains("not_ready"))
            }
            try cluster.startServer()

            var ready = false
            for _ in 0..<50 where !ready {
                try await http.execute(uri: "/readyz", method: .get) { ready = $0.status == .ok }
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(ready)
            try await services.eventStore.append(
                to: UUID(), streamType: "test", subjectID: nil, expected: .any,
                events: [NewEvent(type: "test.after", payload: [])])
            let count = try await client.query("SELECT count(*) FROM events")[0].int(0)
            #expect(count == 2)
        }
        await client.shutdown()
    }
}

@Suite("Bounded resources")
struct BoundedResourceTests {
    @Test("an exhausted database pool answers 503 service_unavailable with Retry-After, not a hang; /readyz says saturated")
    func poolExhausted() async throws {
        try await TestPostgres.withDatabase { db in
            let client = PostgresClient(configuration: .init(url: db.url, maximumConnections: 1, checkoutTimeout: .milliseconds(200)))
            let services = try makeServices(url: db.url, client: client, clock: db.clock, masterKey: db.masterKey)
            try await Application(router: buildRouter(services)).test(.router) { http in
                let access = try await signUp(http, email: "ana@example.com")
                // The pool's one connection, held until the test ends the statement: a loaded
                // machine could outlast any fixed sleep before the request below is served.
                let holder = try await HeldConnection(of: client, watchedThrough: db.client)
                let answer = try await call(http, .get, "/me", token: access)
                #expect(answer.status == .serviceUnavailable)
                #expect(answer.string("error") == "service_unavailable")
                #expect(answer.headers[.retryAfter] == "1")
                // Busy is not away: /readyz says the pool is saturated, not that there is no primary.
                let ready = try await call(http, .get, "/readyz")
                #expect(ready.status == .serviceUnavailable && ready.body["database"] == nil)
                #expect((ready.body["message"] as? String)?.contains("saturated") == true)
                try await holder.release()
                #expect(try await call(http, .get, "/me", token: access).status == .ok)
            }
            await client.shutdown()
        }
    }
}

@Suite("Deployment files")
struct DeploymentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("docker/compose.yaml is valid for docker-compose")
    func composeFileValid() throws {
        let compose = ["/usr/bin/docker-compose", "/usr/local/bin/docker-compose"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let path = try #require(compose, "docker-compose is not installed: scripts/setup.sh installs it")
        setenv("LEDGER_MASTER_KEY", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", 0)
        setenv("LEDGER_DELIVERY_WEBHOOK_URL", "https://bridge.example.com/deliveries", 0)
        let (status, output) = try ChildProcess.run(
            path,
            [
                "--project-directory", Self.root.appendingPathComponent("docker").path,
                "-f", Self.root.appendingPathComponent("docker/compose.yaml").path, "config", "-q",
            ])
        #expect(status == 0, "docker-compose config failed: \(output)")
    }

    @Test("the Dockerfile builds the ledger product and runs as a non-root user")
    func dockerfileShape() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docker/Dockerfile"), encoding: .utf8)
        #expect(text.contains("--product ledger"))
        #expect(text.contains("libpq5"))
        #expect(text.contains("libssl3"))
        // LedgerDelivery's SMTP links libcurl (CLibCurl): to build, and to run.
        #expect(text.contains("libcurl4-openssl-dev") && text.contains("libcurl4 "))
        // LedgerCrypto checks imported hashes with libxcrypt and libargon2: to build, and to run.
        #expect(text.contains("libcrypt-dev") && text.contains("libargon2-dev") && text.contains("libargon2-1 "))
        #expect(text.range(of: #"(?m)^USER\s+\S+"#, options: .regularExpression) != nil)
    }
}
