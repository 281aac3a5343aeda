import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: session introspection for backends", .timeLimit(.minutes(10)))
struct IntrospectionTests {
    @Test("a sessions:introspect key sees live tokens; wrong keys are 401, wrong scopes 403")
    func introspection() async throws {
        // That the key is stored only as its hash: AtRestTests.apiKeyHashed.
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            let (_, key) = try await db.apiKeys.create(name: "bookings", scopes: [.sessionsIntrospect])
            let (_, auditKey) = try await db.apiKeys.create(name: "audit", scopes: [.auditRead])
            let (revokedID, revokedKey) = try await db.apiKeys.create(name: "old", scopes: [.sessionsIntrospect])
            #expect(try await db.apiKeys.revoke(revokedID))
            try await app.test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                func introspect(_ token: String, with apiKey: String) async throws -> (HTTPResponse.Status, [String: Any]) {
                    try await client.execute(
                        uri: "/sessions/introspect", method: .post, headers: bearer(apiKey), body: jsonBody(["token": token])
                    ) { response in
                        expectConforms(response, "post", "/sessions/introspect")
                        return (response.status, try json(response))
                    }
                }
                let (status, body) = try await introspect(access, with: key)
                #expect(status == .ok)
                #expect(body["active"] as? Bool == true)
                #expect(body["email_verified"] as? Bool == false)
                #expect(body["account_id"] is String && body["session_id"] is String)
                #expect((body["expires_at"] as? String)?.hasSuffix("Z") == true)
                let unknown = try await introspect("la_nope", with: key).1
                #expect(unknown["active"] as? Bool == false)
                for field in ["account_id", "session_id", "email_verified", "expires_at"] { #expect(unknown[field] is NSNull) }
                let (auditStatus, auditBody) = try await introspect(access, with: auditKey)
                #expect(auditStatus == .forbidden)
                #expect(auditBody["error"] as? String == "insufficient_scope")
                for wrong in [revokedKey, "lk_wrong", access] {
                    let (wrongStatus, wrongBody) = try await introspect(access, with: wrong)
                    #expect(wrongStatus == .unauthorized)
                    #expect(wrongBody["error"] as? String == "invalid_api_key")
                }
                db.clock.advance(by: 900)
                #expect(try await introspect(access, with: key).1["active"] as? Bool == false)
            }
        }
    }
}
