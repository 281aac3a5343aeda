import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import LedgerWorkers
import NIOCore
import Testing

@Suite("HTTP: webhook subscriptions and /metrics", .timeLimit(.minutes(10)))
struct SubscriptionsEndpointTests {
    @Test("admins create, read, pause, resume and delete subscriptions; the secret is never shown")
    func lifecycle() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let admin = try await services.apiKeys.create(name: "ops", scopes: [.admin]).key
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
                let created = try await call(
                    client, .post, "/subscriptions",
                    ["url": "https://hooks.example.net/ledger", "types": ["account.registered"], "secret": secret], token: admin)
                #expect(created.status == .created)
                #expect(created.string("status") == "active" && created.body["lag_events"] as? Int == 0)
                #expect(!created.body.values.contains { ($0 as? String) == secret })
                let id = try #require(created.string("id"))
                let path = "/subscriptions/{id}"
                _ = try await signUp(client, email: "ana@example.com")
                let read = try await call(client, .get, "/subscriptions/\(id)", token: admin, path: path)
                #expect(read.status == .ok && (read.body["types"] as? [String]) == ["account.registered"])
                let paused = try await call(client, .post, "/subscriptions/\(id)/pause", token: admin, path: "/subscriptions/{id}/pause")
                #expect(paused.string("status") == "paused" && paused.string("paused_reason") == "operator")
                let resumed = try await call(client, .post, "/subscriptions/\(id)/resume", token: admin, path: "/subscriptions/{id}/resume")
                #expect(resumed.string("status") == "active")
                let list = try await call(client, .get, "/subscriptions", token: admin)
                #expect((list.body["subscriptions"] as? [[String: Any]])?.count == 1)
                #expect((list.body["subscriptions"] as? [[String: Any]])?.first?["format"] as? String == "plain")

                let invalid = try await call(client, .post, "/subscriptions", ["url": "nope", "secret": "short"], token: admin)
                #expect(invalid.status == .unprocessableContent)
                #expect(
                    (invalid.body["errors"] as? [[String: Any]])?.compactMap { $0["code"] as? String } == ["invalid_url", "invalid_secret"])
                #expect(try await call(client, .post, "/subscriptions", ["url": 5], token: admin).status == .badRequest)

                // No secret: one is made and answered this once; the format is the caller's.
                let made = try await call(
                    client, .post, "/subscriptions", ["url": "https://hooks.example.net/ce", "format": "cloudevents"], token: admin)
                #expect(made.status == .created && made.string("format") == "cloudevents")
                #expect(made.headers[.cacheControl] == "no-store")
                let generated = try #require(made.string("secret"))
                #expect(generated.hasPrefix("whsec_") && Data(base64Encoded: String(generated.dropFirst(6)))?.count == 32)
                let madeID = try #require(made.string("id"))
                let again = try await call(client, .get, "/subscriptions/\(madeID)", token: admin, path: path)
                #expect(again.body["secret"] == nil && again.string("format") == "cloudevents")
                let badFormat = try await call(
                    client, .post, "/subscriptions", ["url": "https://hooks.example.net/x", "format": "xml"], token: admin)
                #expect(badFormat.status == .unprocessableContent)
                // A rotation answers the new secret once; a reader key cannot rotate; an unknown id is 404.
                let rotatePath = "/subscriptions/{id}/rotate-secret"
                let rotated = try await call(client, .post, "/subscriptions/\(madeID)/rotate-secret", token: admin, path: rotatePath)
                #expect(rotated.status == .ok && rotated.string("secret")?.hasPrefix("whsec_") == true)
                #expect(rotated.headers[.cacheControl] == "no-store")
                #expect(rotated.string("secret") != generated)
                #expect(
                    try await call(client, .post, "/subscriptions/\(madeID)/rotate-secret", token: reader, path: rotatePath).status
                        == .forbidden)
                #expect(
                    try await call(client, .post, "/subscriptions/\(UUID().uuidString)/rotate-secret", token: admin, path: rotatePath)
                        .status == .notFound)
                // A stolen session (an app's access token) is no API key: 401, and nothing rotates.
                let session = try await signUp(client, email: "bob@example.com")
                let stolen = try await call(client, .post, "/subscriptions/\(madeID)/rotate-secret", token: session, path: rotatePath)
                #expect(stolen.status == .unauthorized && stolen.string("error") == "invalid_api_key")
                #expect(try await call(client, .get, "/subscriptions", token: session).status == .unauthorized)
                // Wrong types are 400 with the error shape, and make nothing.
                let before = (try await call(client, .get, "/subscriptions", token: admin).body["subscriptions"] as? [Any])?.count
                for body: [String: Any] in [
                    ["url": "https://hooks.example.net/t", "format": 5], ["url": "https://hooks.example.net/t", "secret": 12],
                ] {
                    let refused = try await call(client, .post, "/subscriptions", body, token: admin)
                    #expect(refused.status == .badRequest && refused.string("error") == "invalid_request", "\(body)")
                }
                #expect((try await call(client, .get, "/subscriptions", token: admin).body["subscriptions"] as? [Any])?.count == before)
                #expect(try await call(client, .get, "/subscriptions", token: reader).status == .forbidden)
                #expect(try await call(client, .delete, "/subscriptions/\(id)", token: admin, path: path).status == .noContent)
                #expect(try await call(client, .get, "/subscriptions/\(id)", token: admin, path: path).status == .notFound)
                #expect(try await call(client, .delete, "/subscriptions/\(id)", token: admin, path: path).status == .notFound)
            }
        }
    }

    @Test("subscription URLs on loopback, private, link-local and metadata addresses are 422 unless LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS")
    func privateDestinations() async throws {
        try await TestPostgres.withDatabase { db in
            for allowed in [false, true] {
                let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                    $0.webhookAllowPrivateNetworks = allowed
                }
                let admin = try await services.apiKeys.create(name: "ops", scopes: [.admin]).key
                try await Application(router: buildRouter(services)).test(.router) { client in
                    let destinations = [
                        "http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.1.2.3/hook", "http://172.16.0.9/hook",
                        "http://192.168.1.1/hook", "http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/hook",
                        "http://0.0.0.0/hook", "http://[::1]/hook", "http://[fd00:ec2::254]/hook", "http://[fe80::1]/hook",
                        "http://[::ffff:127.0.0.1]/hook", "http://[64:ff9b::a9fe:a9fe]/hook",
                        // IPv6 outside global unicast, and special-purpose or IPv4-carrying forms of private addresses.
                        "http://[::127.0.0.1]/hook", "http://[::ffff:0:127.0.0.1]/hook", "http://[5f00::1]/hook",
                        "http://[2001:db8::1]/hook",
                        "http://[64:ff9b::7f00:1]/hook", "http://[2002:c0a8:101::1]/hook",
                        // Decimal, hex, octal and short spellings of 127.0.0.1.
                        "http://2130706433/hook", "http://0x7f000001/hook", "http://0177.0.0.1/hook", "http://127.1/hook",
                    ]
                    for destination in destinations {
                        let answer = try await call(
                            client, .post, "/subscriptions", ["url": destination, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
                            token: admin)
                        if allowed {
                            #expect(answer.status == .created, "\(destination)")
                        } else {
                            #expect(answer.status == .unprocessableContent, "\(destination)")
                            let codes = (answer.body["errors"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
                            #expect(codes == ["private_address"], "\(destination)")
                        }
                    }
                    // A host that HTTP clients read apart from Foundation (percent-encoded brackets around a
                    // name, which one strips and resolves again past the pin) is no URL here, allowed or not.
                    for odd in ["http://%5Brebind.attacker.example%5D/hook", "http://[hooks.example.com]/hook", "http://a%20b.example/"] {
                        let answer = try await call(
                            client, .post, "/subscriptions", ["url": odd, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], token: admin)
                        let codes = (answer.body["errors"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
                        #expect(answer.status == .unprocessableContent && codes == ["invalid_url"], "\(odd)")
                    }
                    if !allowed {
                        let pinned = await services.subscriptions.destination(of: "http://%5Blocalhost%5D/hook")
                        #expect(pinned == .refused("The URL's host is not an address or a plain host name."))
                    }
                    // Pushes connect to the address checked, whatever the name resolves to later.
                    let destination = await services.subscriptions.destination(of: "https://93.184.215.14/hook")
                    #expect(destination == (allowed ? .unchecked : .pinned(host: "93.184.215.14", address: "93.184.215.14")))
                    if !allowed {
                        #expect(await services.subscriptions.destination(of: "http://no-such-host.invalid/") == .unresolved)
                    }
                    // A public address literal is fine either way (nothing is sent here).
                    let public4 = try await call(
                        client, .post, "/subscriptions",
                        ["url": "https://93.184.215.14/hook", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
                        token: admin)
                    #expect(public4.status == .created)
                }
            }
        }
    }

    @Test("with LEDGER_METRICS_PORT, /metrics moves to its own router: the API's port answers 404")
    func metricsPort() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                $0.metricsPort = 9464
            }
            try await Application(router: buildRouter(services)).test(.router) { client in
                let status = try await client.execute(uri: "/metrics", method: .get) { $0.status }
                #expect(status == .notFound)
            }
            try await Application(router: buildMetricsRouter(services.routerDependencies)).test(.router) { client in
                try await client.execute(uri: "/metrics", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body).contains("outbox_backlog_messages"))
                }
            }
        }
    }

    @Test("/metrics shows request latency by route and the operational gauges")
    func metrics() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(
                    UUID(uuidString: try await call(client, .get, "/me", token: access).string("account_id") ?? ""))
                let other = try await signUp(client, email: "bob@example.com")
                let otherID = try #require(UUID(uuidString: try await call(client, .get, "/me", token: other).string("account_id") ?? ""))
                // One account due for purge, one already purged (its data key destroyed).
                try await db.client.query(
                    "UPDATE accounts SET deleted_at = $2, purge_after = $2 WHERE account_id = $1",
                    [.uuid(accountID), .timestamp(db.clock.now())])
                _ = try await db.client.withConnection { connection in
                    try await services.eventStore.keyring.destroy(subjectID: otherID, at: db.clock.now(), on: connection)
                }
                let text = try await client.execute(uri: "/metrics", method: .get) { response in
                    #expect(response.status == .ok)
                    return String(buffer: response.body)
                }
                #expect(
                    text.contains(#"ledger_http_request_duration_seconds_bucket{route="/auth/email/signup",method="POST",status="201""#))
                for gauge in [
                    "ledger_events_appended_total", "ledger_feed_held_back_events", "ledger_outbox_backlog_messages",
                    "ledger_purge_due_accounts", "ledger_purged_accounts_total",
                ] {
                    #expect(text.contains("\n\(gauge) ") || text.hasPrefix("\(gauge) "), "\(gauge)")
                }
                let appended = text.split(separator: "\n").first { $0.hasPrefix("ledger_events_appended_total ") }
                #expect((appended?.split(separator: " ").last.flatMap { Double($0) } ?? 0) > 0)
                #expect(text.contains("ledger_outbox_backlog_messages 2"))
                #expect(text.contains("ledger_purge_due_accounts 1"))
                #expect(text.contains("ledger_purged_accounts_total 1"))
                #expect(!text.contains("example.com"))
            }
        }
    }

    @Test("/metrics shows whether this instance runs the purge, and how long the oldest due purge has waited")
    func purgeMetrics() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(
                    UUID(uuidString: try await call(client, .get, "/me", token: access).string("account_id") ?? ""))
                // Due for purge these 90 seconds.
                try await db.client.query(
                    "UPDATE accounts SET deleted_at = $2, purge_after = $2 WHERE account_id = $1",
                    [.uuid(accountID), .timestamp(db.clock.now().addingTimeInterval(-90))])
                /// Runs the purge's service until /metrics shows every one of `lines`.
                func run(_ leadership: PurgeLeadership, until lines: [String]) async throws {
                    let running = Task { try await leadership.run() }
                    var text = ""
                    for _ in 0..<100 {
                        text = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                        if lines.allSatisfy({ text.contains("\n\($0)") }) { break }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    // Stopped before the next one starts: its last report (not leading) comes first.
                    running.cancel()
                    _ = try? await running.value
                    #expect(lines.allSatisfy { text.contains("\n\($0)") }, "\(text.split(separator: "\n").filter { $0.contains("purge") })")
                }
                let worker = PurgeWorker(store: services.eventStore, clock: db.clock)
                let report: @Sendable (Bool, Double?) -> Void = { services.metrics.recordPurge(leading: $0, oldestDueSeconds: $1) }
                // --no-purge: never the leader, the age all the same.
                try await run(
                    PurgeLeadership(
                        worker: worker, lock: nil, interval: .seconds(60), takeover: .seconds(30), clock: db.clock, report: report),
                    until: ["ledger_purge_leader 0", "ledger_purge_oldest_due_seconds 90"])
                // Holding the lock: it leads, its pass purges the account, and nothing is due any more.
                let lock = SessionAdvisoryLock(client: db.client, key: PurgeLeadership.lockKey)
                try await run(
                    PurgeLeadership(
                        worker: worker, lock: lock, interval: .seconds(60), takeover: .seconds(30), clock: db.clock, report: report),
                    until: ["ledger_purge_leader 1", "ledger_purge_oldest_due_seconds 0"])
                #expect(try await db.client.query("SELECT 1 FROM accounts WHERE account_id = $1", [.uuid(accountID)]).rowCount == 0)
            }
        }
    }
}
