import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerTestSupport
import LedgerWorkers
import NIOCore
import Testing

@testable import LedgerServer

// The audit trail: what each event records of who did it and from where (its metadata), and
// how auditors read an account back (its history, its state at an instant, its chain check).
// It is the event store's, so these suites run on PostgreSQL.

@Suite("HTTP: audit of one account", .timeLimit(.minutes(10)))
struct AuditTrailTests {
    @Test("history, the state at several instants, and the chain check that finds an edit")
    func historyStateVerify() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let auditor = try await services.apiKeys.create(name: "auditor", scopes: [.auditRead]).key
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                let signedUpAt = db.clock.now()
                let access = try await signUp(client, email: "ana@example.com", handle: "ana_m")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                // Within the access token's 15 minutes.
                db.clock.advance(by: 600)
                let renamedAt = db.clock.now()
                #expect(
                    try await call(client, .patch, "/me/profile", ["display_name": "Ana M.", "handle": "ana_coach"], token: access).status
                        == .ok)
                db.clock.advance(by: 600)
                let state = { (at: Date?) async throws -> Answer in
                    let query = at.map { "?at=\(RFC3339.format($0))" } ?? ""
                    return try await call(
                        client, .get, "/accounts/\(accountID)/state\(query)", token: auditor, path: "/accounts/{id}/state")
                }

                let history = try await call(client, .get, "/accounts/\(accountID)/events", token: auditor, path: "/accounts/{id}/events")
                let events = try #require(history.body["events"] as? [[String: Any]])
                #expect(events.compactMap { $0["version"] as? Int } == Array(1...events.count))
                #expect(events.first?["type"] as? String == "account.registered")

                // Before the sign-up there was no account; at it, the first handle; after the rename, the new one.
                #expect(try await state(signedUpAt.addingTimeInterval(-1)).status == .notFound)
                let first = try await state(signedUpAt)
                #expect(first.status == .ok)
                #expect((first.body["profile"] as? [String: Any])?["handle"] as? String == "ana_m")
                #expect((first.body["profile"] as? [String: Any])?["display_name"] is NSNull)
                #expect((first.body["hub"] as? [String: Any])?["email"] as? String == "ana@example.com")
                #expect((first.body["lifecycle"] as? [String: Any])?["status"] as? String == "active")
                let firstVersion = try #require(first.body["version"] as? Int)
                let renamed = try await state(renamedAt)
                #expect((renamed.body["profile"] as? [String: Any])?["handle"] as? String == "ana_coach")
                #expect((renamed.body["profile"] as? [String: Any])?["display_name"] as? String == "Ana M.")
                #expect(try #require(renamed.body["version"] as? Int) > firstVersion)
                #expect(renamed.string("at") == RFC3339.format(renamedAt))
                let now = try await state(nil)
                #expect(now.body["version"] as? Int == events.count)

                let verified = try await call(client, .get, "/accounts/\(accountID)/verify", token: auditor, path: "/accounts/{id}/verify")
                #expect(verified.body["ok"] as? Bool == true && verified.body["events"] as? Int == events.count)
                try await db.client.query(
                    "UPDATE events SET metadata = '{\"actor\":\"someone-else\"}' WHERE stream_id = $1 AND stream_version = 2",
                    [.uuid(try #require(UUID(uuidString: accountID)))])
                let broken = try await call(client, .get, "/accounts/\(accountID)/verify", token: auditor, path: "/accounts/{id}/verify")
                #expect(broken.body["ok"] as? Bool == false && broken.body["first_bad_version"] as? Int == 2)

                // Unknown accounts, bad times, wrong scopes.
                let unknown = try await call(client, .get, "/accounts/\(UUID())/events", token: auditor, path: "/accounts/{id}/events")
                #expect(unknown.status == .notFound && unknown.string("error") == "no_account")
                #expect(
                    try await call(client, .get, "/accounts/\(UUID())/verify", token: auditor, path: "/accounts/{id}/verify").status
                        == .notFound)
                #expect(
                    try await call(client, .get, "/accounts/nope/state", token: auditor, path: "/accounts/{id}/state").status == .notFound)
                let badTime = try await call(
                    client, .get, "/accounts/\(accountID)/state?at=yesterday", token: auditor, path: "/accounts/{id}/state")
                #expect(badTime.status == .badRequest && badTime.string("error") == "invalid_request")
                let scope = try await call(client, .get, "/accounts/\(accountID)/events", token: reader, path: "/accounts/{id}/events")
                #expect(scope.status == .forbidden)
            }
        }
    }

    @Test("times show whole seconds, and the state at a shown time includes every event shown as recorded at it")
    func atCoversItsSecond() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let auditor = try await services.apiKeys.create(name: "auditor", scopes: [.auditRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                db.clock.advance(by: 0.25)
                let access = try await signUp(client, email: "ana@example.com", handle: "ana_m")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                // The rename is recorded 0.75 s into the second, after the second the history shows.
                db.clock.advance(by: 0.5)
                #expect(try await call(client, .patch, "/me/profile", ["handle": "ana_coach"], token: access).status == .ok)
                let history = try await call(client, .get, "/accounts/\(accountID)/events", token: auditor, path: "/accounts/{id}/events")
                let shown = try #require((history.body["events"] as? [[String: Any]])?.last?["recorded_at"] as? String)
                #expect(shown == "2026-09-21T14:13:20Z")
                let state = try await call(
                    client, .get, "/accounts/\(accountID)/state?at=\(shown)", token: auditor, path: "/accounts/{id}/state")
                #expect((state.body["profile"] as? [String: Any])?["handle"] as? String == "ana_coach")
                #expect(state.string("at") == shown)
                let before = try await call(
                    client, .get, "/accounts/\(accountID)/state?at=2026-09-21T14:13:19Z", token: auditor, path: "/accounts/{id}/state")
                #expect(before.status == .notFound)
            }
        }
    }

    @Test("an operator's disable and enable name their key as the actor; auditors see the account disabled, since when, then active")
    func disableRecorded() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let (adminID, admin) = try await services.apiKeys.create(name: "support", scopes: [.accountsAdmin])
            let auditor = try await services.apiKeys.create(name: "audit", scopes: [.auditRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                func post(_ action: String, _ body: [String: Any]? = nil) async throws -> Answer {
                    try await call(client, .post, "/accounts/\(accountID)/\(action)", body, token: admin, path: "/accounts/{id}/\(action)")
                }
                #expect(try await post("disable", ["reason": "chargeback"]).status == .ok)
                // The event says why, and its metadata which key.
                let rows = try await db.client.query(
                    "SELECT metadata->>'actor' FROM events WHERE event_type = 'account.disabled' AND stream_id = $1",
                    [.uuid(try #require(UUID(uuidString: accountID)))])
                #expect(rows.rowCount == 1 && rows[0].string(0) == "service:\(adminID.lowercased)")
                // Auditors see it disabled, and since when; enabled again, active.
                func lifecycle() async throws -> [String: Any]? {
                    let state = try await call(
                        client, .get, "/accounts/\(accountID)/state", token: auditor, path: "/accounts/{id}/state")
                    return state.body["lifecycle"] as? [String: Any]
                }
                let whileDisabled = try await lifecycle()
                #expect(whileDisabled?["status"] as? String == "disabled")
                #expect(whileDisabled?["disabled_at"] as? String == RFC3339.format(db.clock.now()))
                #expect(try await post("enable").status == .ok)
                let afterwards = try await lifecycle()
                #expect(afterwards?["status"] as? String == "active" && afterwards?["disabled_at"] is NSNull)
            }
        }
    }

    @Test(
        "support's every call is on the account's stream, hash-chained, for auditors; a purged account is looked at with nothing personal")
    func supportRecorded() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let (keyID, admin) = try await services.apiKeys.create(name: "lead", scopes: [.accountsAdmin])
            let auditor = try await services.apiKeys.create(name: "audit", scopes: [.auditRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let operatorHeader: HTTPFields = [HTTPField.Name("X-Ledger-Operator")!: "Nino (support)"]
                func desk(_ method: HTTPRequest.Method, _ suffix: String, _ body: [String: Any]? = nil, path: String) async throws -> Answer
                {
                    try await call(
                        client, method, "/admin/accounts/\(accountID)\(suffix)", body, token: admin, path: path, headers: operatorHeader)
                }
                #expect(try await desk(.get, "", path: "/admin/accounts/{id}").status == .ok)
                #expect(try await desk(.post, "/disable", ["reason": "chargeback"], path: "/admin/accounts/{id}/disable").status == .ok)
                let events = try await call(client, .get, "/accounts/\(accountID)/events", token: auditor, path: "/accounts/{id}/events")
                let listed = events.body["events"] as? [[String: Any]] ?? []
                let support = listed.filter { ($0["type"] as? String)?.hasPrefix("admin.") == true }
                #expect(support.map { $0["type"] as? String } == ["admin.viewed", "admin.disabled"])
                let disabled = support.last?["data"] as? [String: Any]
                #expect(disabled?["operator"] as? String == "Nino (support)" && disabled?["reason"] as? String == "chargeback")
                #expect(disabled?["key_id"] as? String == keyID.lowercased)
                let verified = try await call(client, .get, "/accounts/\(accountID)/verify", token: auditor, path: "/accounts/{id}/verify")
                #expect(verified.body["ok"] as? Bool == true)
                // Backends reading the feed see that support acted, not who or why.
                let reader = try await services.apiKeys.create(name: "billing", scopes: [.eventsRead]).key
                // Waiting for it: the feed's horizon may stand behind another suite's open transaction.
                let feed = try await call(client, .get, "/events?limit=100&types=admin.disabled&wait=20", token: reader, path: "/events")
                let fed = (feed.body["events"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "admin.disabled" }
                #expect(fed.count == 1 && (fed.first?["data"] as? [String: Any])?.keys.sorted() == [])

                // Deleted, then purged: a look still answers, and is recorded, with nothing of the person.
                #expect(try await desk(.post, "/enable", ["reason": "resolved"], path: "/admin/accounts/{id}/enable").status == .ok)
                let session = try await logIn(client, email: "ana@example.com")
                let grant = try await emailLinkGrant(client, db, token: session)
                #expect(try await call(client, .delete, "/me", token: session, reauth: grant).status == .accepted)
                db.clock.advance(by: services.configuration.policies.purgeDelay + 1)
                #expect(try await PurgeWorker(store: services.eventStore, clock: db.clock).runOnce() == 1)
                let purged = try await desk(.get, "", path: "/admin/accounts/{id}")
                #expect(purged.status == .ok && purged.string("status") == "purged")
                #expect(purged.body["email"] is NSNull && purged.body["created_at"] is NSNull)
                let changed = try await desk(.post, "/sign-out", ["reason": "x"], path: "/admin/accounts/{id}/sign-out")
                #expect(changed.status == .gone)
                let history = try await services.eventStore.readStream(try #require(UUID(uuidString: accountID)))
                #expect(history.last?.type == "admin.viewed" && history.last?.payload != nil)
                #expect(history.allSatisfy { $0.payload == nil || ["account.purged", "admin.viewed"].contains($0.type) })
                #expect(try await db.client.rowsHolding("ana@example.com") == 0)
                #expect(
                    try await call(client, .get, "/accounts/\(accountID)/verify", token: auditor, path: "/accounts/{id}/verify").body["ok"]
                        as? Bool == true)
            }
        }
    }

    @Test("a hold's placing and its release both name the key that made them as the actor")
    func holdActors() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let bookings = try await services.apiKeys.create(name: "bookings", scopes: [.holdsWrite])
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let path = "/accounts/{id}/holds/{ref}"
                let hold = "/accounts/\(accountID)/holds/b1"
                #expect(try await call(client, .put, hold, ["kind": "upcoming_booking"], token: bookings.key, path: path).status == .ok)
                #expect(try await call(client, .delete, hold, token: bookings.key, path: path).status == .noContent)
                let actors = try await db.client.query(
                    "SELECT metadata->>'actor' FROM events WHERE event_type LIKE 'hold.%' ORDER BY global_position")
                #expect(actors.rows.compactMap { $0.string(0) } == Array(repeating: "service:\(bookings.id.lowercased)", count: 2))
            }
        }
    }
}

@Suite("HTTP: event metadata", .timeLimit(.minutes(10)))
struct EventMetadataTests {
    @Test("a request's events record its id, the client's hashed address, the user-agent class and the account as actor")
    func requestMetadata() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let writer = try await services.apiKeys.create(name: "bookings", scopes: [.holdsWrite])
            try await Application(router: buildRouter(services)).test(.live) { client in
                var headers = jsonHeaders
                headers[.userAgent] = "321Fit/4.2 (iPhone; iOS 18.1; Scale/3.00)"
                headers[HTTPField.Name("X-Request-Id")!] = "signup-7f3a"
                let access = try await client.execute(
                    uri: "/auth/email/signup", method: .post, headers: headers,
                    body: jsonBody(["email": "ana@example.com", "password": "violet-harbor-91"])
                ) { response in
                    #expect(response.status == .created)
                    return try json(response)["access_token"] as? String ?? ""
                }
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let signup = try await services.eventStore.readStream(try #require(UUID(uuidString: accountID)))
                #expect(signup.count >= 3)
                let ipHash = try #require(signup.first?.metadata.ipHash)
                for event in signup {
                    #expect(event.metadata.actor == "account:\(accountID)")
                    #expect(event.metadata.correlationID == "signup-7f3a")
                    #expect(event.metadata.userAgentClass == "ios")
                    #expect(event.metadata.ipHash == ipHash)
                    #expect(!event.metadataJSON.contains("127.0.0.1") && !event.metadataJSON.contains("iPhone"))
                }
                #expect(ipHash.count == 32 && Hex.decode(ipHash) != nil)

                // A service's call names its API key as the actor.
                let hold = try await call(
                    client, .put, "/accounts/\(accountID)/holds/d1", ["kind": "dispute"], token: writer.key,
                    path: "/accounts/{id}/holds/{ref}")
                #expect(hold.status == .ok)
                let placed = try await services.eventStore.readStream(try #require(UUID(uuidString: accountID))).last
                #expect(placed?.type == "hold.placed")
                #expect(placed?.metadata.actor == "service:\(writer.id.lowercased)")
                #expect(placed?.metadata.correlationID != "signup-7f3a" && placed?.metadata.correlationID?.isEmpty == false)
                #expect(placed?.metadata.ipHash == ipHash)
            }
        }
    }

    @Test("user agents fall into ios, android, web or other")
    func userAgentClasses() {
        let cases: [(String?, String?)] = [
            ("321Fit/4.2 (iPhone; iOS 18.1; Scale/3.00)", "ios"), ("Handz/1 CFNetwork/1490.0.4 Darwin/23.2.0", "ios"),
            ("okhttp/4.12.0", "android"), ("Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)", "android"),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15", "web"),
            ("curl/8.5.0", "other"), ("", nil), (nil, nil),
        ]
        for (userAgent, expected) in cases {
            #expect(EventMetadataMiddleware.userAgentClass(userAgent) == expected, "\(userAgent ?? "nil")")
        }
    }

    @Test("the address hash is keyed per account: stable within one account, different across accounts, gone with the key")
    func addressHash() async throws {
        let key = try DataKey.generate()
        let address = try #require(IPAddress.bytes("198.51.100.7"))
        let other = try #require(IPAddress.bytes("198.51.100.8"))
        let hash = key.addressHash(address)
        #expect(hash == key.addressHash(address))
        #expect(hash != key.addressHash(other))
        #expect(hash != (try DataKey.generate()).addressHash(address))
        #expect(hash.count == 16)
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            try await Application(router: buildRouter(services)).test(.live) { client in
                var hashes: [String] = []
                for email in ["ana@example.com", "bo@example.com"] {
                    let access = try await signUp(client, email: email)
                    let me = try await call(client, .get, "/me", token: access)
                    let accountID = try #require(me.string("account_id").flatMap(UUID.init(uuidString:)))
                    let events = try await services.eventStore.readStream(accountID)
                    hashes.append(try #require(events.first?.metadata.ipHash))
                }
                // One address, two accounts: nothing links their histories.
                #expect(hashes[0] != hashes[1])
            }
        }
    }
}
