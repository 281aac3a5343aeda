import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

/// What the database holds, and what it must not: secrets only as hashes, codes and tokens
/// nowhere in the clear, personal data only under keys a purge destroys. These tests read the
/// tables themselves, so they run on PostgreSQL; each endpoint's behaviour is tested on memory
/// in its area's suite.
@Suite("PostgreSQL: what is stored at rest", .timeLimit(.minutes(10)))
struct AtRestTests {
    @Test("an API key is stored as its hash: the table holds nothing of the key, and the hash still finds it")
    func apiKeyHashed() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock)
            let (_, key) = try await services.apiKeys.create(name: "bookings", scopes: [.sessionsIntrospect])
            #expect(
                try await db.client.query(
                    "SELECT count(*) FROM api_keys WHERE position(convert_to($1, 'UTF8') IN key_sha256) > 0", [.text(key)])[0].int(0) == 0)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                try await client.execute(
                    uri: "/sessions/introspect", method: .post, headers: bearer(key), body: jsonBody(["token": access])
                ) { response in
                    let body = try json(response)
                    #expect(body["active"] as? Bool == true)
                }
            }
        }
    }

    @Test("the cooldown list keeps keyed hashes of the addresses an account proved, and nothing of one it never did")
    func cooldownKeyed() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApp(db).test(.router) { client in
                let squatter = try await signUp(client, email: "bob@example.com")
                #expect(
                    try await call(client, .delete, "/me", token: squatter, reauth: try await passwordGrant(client, token: squatter)).status
                        == .accepted)
                #expect(try await db.client.query("SELECT count(*) FROM signup_cooldowns")[0].int(0) == 0)
                let access = try await accountWithPhone(client, db)
                #expect(
                    try await call(client, .delete, "/me", token: access, reauth: try await passwordGrant(client, token: access)).status
                        == .accepted)
                // The verified email and the number are listed, neither in the clear.
                #expect(try await db.client.query("SELECT count(*) FROM signup_cooldowns")[0].int(0) == 2)
                for identifier in ["ana", "995511200300"] {
                    let clear = try await db.client.query(
                        "SELECT count(*) FROM signup_cooldowns WHERE position(convert_to($1, 'UTF8') IN key_hmac) > 0", [.text(identifier)])
                    #expect(try clear[0].int(0) == 0)
                }
            }
        }
    }

    @Test("nothing in the stored events gives a phone code away: issued, failed, verified")
    func codeNotInEvents() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApp(db).test(.router) { client in
                let requestID = try await requestOTP(client, "+995511200300")
                let code = try await otpCode(db, phone: "+995511200300")
                #expect(try await verifyOTP(client, requestID, wrongCode(code)).status == .unauthorized)
                #expect(try await verifyOTP(client, requestID, code).status == .ok)
                let payloads = try await db.client.query(
                    "SELECT count(*) FROM events WHERE position($1::bytea IN payload) > 0", [.bytea(Array(code.utf8))])
                #expect(try payloads[0].int(0) == 0)
            }
        }
    }
}
