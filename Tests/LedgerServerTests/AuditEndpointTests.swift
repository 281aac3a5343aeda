import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: audit of one account", .timeLimit(.minutes(10)))
struct AuditEndpointTests {
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
}
