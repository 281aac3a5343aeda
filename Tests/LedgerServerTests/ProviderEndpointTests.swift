import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: Sign in with Apple and Google", .timeLimit(.minutes(3)))
struct ProviderEndpointTests {
    struct Providers {
        let apple: TestIdentityIssuer
        let google: TestIdentityIssuer
        let db: TestDatabase

        func appleToken(_ subject: String, email: String? = nil, verified: Bool? = nil, relay: Bool? = nil) async throws -> String {
            try await apple.token(
                subject: subject, email: email, emailVerified: verified, isPrivateEmail: relay,
                expires: db.clock.now().addingTimeInterval(600), issuedAt: db.clock.now())
        }

        func googleToken(_ subject: String, email: String? = nil, verified: Bool? = nil) async throws -> String {
            try await google.token(
                subject: subject, email: email, emailVerified: verified, expires: db.clock.now().addingTimeInterval(600),
                issuedAt: db.clock.now())
        }
    }

    func withApp(_ body: @escaping @Sendable (any TestClientProtocol, Providers) async throws -> Void) async throws {
        try await TestPostgres.withDatabase { db in
            let apple = try await TestIdentityIssuer(issuer: "https://appleid.apple.com", audience: "fit.321.ios")
            let google = try await TestIdentityIssuer(issuer: "https://accounts.google.com", audience: "321fit.apps.googleusercontent.com")
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                $0.appleJWKS = apple.jwksPath
                $0.appleClientIDs = [apple.audience]
                $0.googleJWKS = google.jwksPath
                $0.googleClientIDs = [google.audience]
            }
            try await Application(router: buildRouter(services)).test(.router) { client in
                try await body(client, Providers(apple: apple, google: google, db: db))
            }
        }
    }

    @Test("a new Apple identity creates an account (201) with its address; the next sign-in finds it (200)")
    func signUpAndIn() async throws {
        try await withApp { client, providers in
            let token = try await providers.appleToken("001.ana", email: "ana@example.com", verified: true)
            let created = try await call(client, .post, "/auth/apple", ["id_token": token, "display_name": "Ana"])
            #expect(created.status == .created)
            let access = try #require(created.string("access_token"))
            let hub = try await call(client, .get, "/me/auth-methods", token: access)
            #expect(hub.body["apple_linked"] as? Bool == true && hub.string("email") == "ana@example.com")
            #expect(hub.body["email_verified"] as? Bool == true && hub.body["has_password"] as? Bool == false)
            // Apple sends the address only the first time: it is kept.
            let again = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("001.ana")])
            #expect(again.status == .ok)
            #expect(again.string("account_id") == created.string("account_id"))
            let bad = try await call(client, .post, "/auth/apple", ["id_token": "junk"])
            #expect(bad.status == .unauthorized)
            #expect(bad.string("error") == "invalid_token")
        }
    }

    @Test("linking by email: only when the provider and the account both verified it; never a private relay")
    func linkByEmail() async throws {
        try await withApp { client, providers in
            // A verified email account: Google with the same verified address signs in to it.
            let ana = try await signUp(client, email: "ana@example.com")
            let me = try await call(client, .get, "/me", token: ana)
            let verifyToken = try await outboxToken(providers.db, template: "verify_email")
            #expect(try await call(client, .post, "/auth/email/verify", ["token": verifyToken]).status == .ok)
            let linked = try await call(client, .post, "/auth/google", ["id_token": try await providers.googleToken("g-ana", email: "ana@example.com", verified: true)])
            #expect(linked.status == .ok)
            #expect(linked.string("account_id") == me.string("account_id"))
            // An unverified account with the address is not taken over: a new account, without the address.
            _ = try await signUp(client, email: "bo@example.com")
            let separate = try await call(client, .post, "/auth/google", ["id_token": try await providers.googleToken("g-bo", email: "bo@example.com", verified: true)])
            #expect(separate.status == .created)
            let hub = try await call(client, .get, "/me/auth-methods", token: separate.string("access_token") ?? "")
            #expect(hub.body["email"] is NSNull)
            // A provider that does not vouch for the address does not link either.
            let unverified = try await call(client, .post, "/auth/google", ["id_token": try await providers.googleToken("g-ana-2", email: "ana@example.com", verified: false)])
            #expect(unverified.status == .created)
            // Private relay: never merged.
            let relay = try await call(client, .post, "/auth/apple", [
                "id_token": try await providers.appleToken("a-ana", email: "ana@example.com", verified: true, relay: true),
            ])
            #expect(relay.status == .created)
        }
    }

    @Test("link: an identity owned by another account is 409 provider_in_use; a free one shows on the hub")
    func link() async throws {
        try await withApp { client, providers in
            _ = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-owner")])
            let ana = try await signUp(client, email: "ana@example.com")
            let taken = try await call(client, .post, "/me/auth-methods/link", ["provider": "apple", "id_token": try await providers.appleToken("a-owner")], token: ana)
            #expect(taken.status == .conflict)
            #expect(taken.string("error") == "provider_in_use")
            let hub = try await call(client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-ana")], token: ana)
            #expect(hub.status == .ok)
            #expect(hub.body["google_linked"] as? Bool == true)
            #expect(try await call(client, .post, "/me/auth-methods/link", ["provider": "yahoo", "id_token": "x"], token: ana).status == .unprocessableContent)
        }
    }

    @Test("disconnect: the last method is 409 with the seeds' copy, grant or not; otherwise re-auth first")
    func disconnect() async throws {
        try await withApp { client, providers in
            let created = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")])
            let access = try #require(created.string("access_token"))
            let last = try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "apple"], token: access)
            #expect(last.status == .conflict)
            #expect(last.string("error") == "last_method")
            #expect(last.string("message") == "This is your only sign-in method. Add a phone number, email, or another provider first — then you can disconnect Apple.")
            // Google likewise.
            let googleOnly = try #require(try await call(client, .post, "/auth/google", ["id_token": try await providers.googleToken("g-only")]).string("access_token"))
            let lastGoogle = try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "google"], token: googleOnly)
            #expect(lastGoogle.status == .conflict)
            #expect(lastGoogle.string("message") == "This is your only sign-in method. Add a phone number, email, or another provider first — then you can disconnect Google.")
            let grant = try await call(client, .post, "/auth/reauth/apple", ["id_token": try await providers.appleToken("a-1")], token: access)
            #expect(grant.status == .ok)
            let reauth = try #require(grant.string("reauth_token"))
            #expect(try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "apple"], token: access, reauth: reauth).status == .conflict)
            // Another account's Apple identity is no re-auth for this one.
            #expect(try await call(client, .post, "/auth/reauth/apple", ["id_token": try await providers.appleToken("a-2")], token: access).status == .unauthorized)
            _ = try await call(client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-1")], token: access)
            let options = try await call(client, .get, "/me/reauth-options?action=disconnect_apple", token: access)
            #expect(options.body["methods"] as? [String] == ["google"])
            #expect(try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "apple"], token: access).status == .forbidden)
            let hub = try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "apple"], token: access, reauth: reauth)
            #expect(hub.status == .ok)
            #expect(hub.body["apple_linked"] as? Bool == false && hub.body["google_linked"] as? Bool == true)
            // The identity is free again: signing in with it creates a new account.
            #expect(try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")]).status == .created)
        }
    }

    @Test("two racing disconnects of an Apple + Google account: exactly one succeeds, one method is left")
    func disconnectRace() async throws {
        try await withApp { client, providers in
            let created = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")])
            let access = try #require(created.string("access_token"))
            _ = try await call(client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-1")], token: access)
            let reauth = try #require(try await call(client, .post, "/auth/reauth/google", ["id_token": try await providers.googleToken("g-1")], token: access).string("reauth_token"))
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for provider in ["apple", "google", "apple", "google"] {
                    group.addTask {
                        try await call(client, .post, "/me/auth-methods/disconnect", ["provider": provider], token: access, reauth: reauth).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .ok }.count == 1)
            #expect(statuses.filter { $0 == .conflict }.count == 3)
            let hub = try await call(client, .get, "/me/auth-methods", token: access)
            #expect((hub.body["apple_linked"] as? Bool == true) != (hub.body["google_linked"] as? Bool == true))
        }
    }

    @Test("a deleted account's Apple identity may not sign up again, nor join another account, for 7 days")
    func cooldown() async throws {
        try await withApp { client, providers in
            let created = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1", email: "ana@example.com", verified: true)])
            let access = try #require(created.string("access_token"))
            let reauth = try #require(try await call(client, .post, "/auth/reauth/apple", ["id_token": try await providers.appleToken("a-1")], token: access).string("reauth_token"))
            #expect(try await call(client, .delete, "/me", token: access, reauth: reauth).status == .accepted)
            providers.db.clock.advance(by: 6 * 86400)
            let refused = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")])
            #expect(refused.status == .conflict)
            #expect(refused.string("error") == "signup_cooldown")
            // Nor through another account: connecting it, or signing in with it by a verified email that account holds.
            let bob = try await signUp(client, email: "bob@example.com")
            let linked = try await call(client, .post, "/me/auth-methods/link", ["provider": "apple", "id_token": try await providers.appleToken("a-1")], token: bob)
            #expect(linked.status == .conflict)
            #expect(linked.string("error") == "signup_cooldown")
            #expect(try await call(client, .post, "/auth/email/verify", ["token": try await outboxToken(providers.db, template: "verify_email")]).status == .ok)
            let byEmail = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1", email: "bob@example.com", verified: true)])
            #expect(byEmail.string("error") == "signup_cooldown")
            #expect(try await call(client, .get, "/me/auth-methods", token: bob).body["apple_linked"] as? Bool == false)
            providers.db.clock.advance(by: 86401)
            #expect(try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")]).status == .created)
        }
    }

    @Test("the JWKS is fetched from a URL too, and fetched again for a new key id")
    func jwksOverHTTP() async throws {
        try await TestPostgres.withDatabase { db in
            let apple = try await TestIdentityIssuer(issuer: "https://appleid.apple.com", audience: "fit.321.ios")
            try apple.publish([TestIdentityIssuer.rsaKeyID])
            let jwksRouter = Router()
            jwksRouter.get("/auth/keys") { _, _ -> Response in
                let data = try Data(contentsOf: URL(fileURLWithPath: apple.jwksPath))
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: data)))
            }
            try await Application(router: jwksRouter).test(.live) { jwksServer in
                let port = try #require(jwksServer.port)
                let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                    $0.appleJWKS = "http://127.0.0.1:\(port)/auth/keys"
                    $0.appleClientIDs = [apple.audience]
                }
                try await Application(router: buildRouter(services)).test(.router) { client in
                    func token(_ keyID: String) async throws -> String {
                        try await apple.token(
                            subject: "a-url", expires: db.clock.now().addingTimeInterval(600), issuedAt: db.clock.now(), keyID: keyID)
                    }
                    #expect(try await call(client, .post, "/auth/apple", ["id_token": try await token(TestIdentityIssuer.rsaKeyID)]).status == .created)
                    try apple.publish([TestIdentityIssuer.rsaKeyID, TestIdentityIssuer.ecKeyID])
                    db.clock.advance(by: 61)
                    #expect(try await call(client, .post, "/auth/apple", ["id_token": try await token(TestIdentityIssuer.ecKeyID)]).status == .ok)
                }
            }
        }
    }
}
