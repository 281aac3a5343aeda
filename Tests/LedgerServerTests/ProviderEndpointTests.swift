import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: Sign in with Apple and Google", .timeLimit(.minutes(10)))
struct ProviderEndpointTests {
    struct Providers<Backend: TestBackend>: Sendable {
        let apple: TestIdentityIssuer
        let google: TestIdentityIssuer
        let db: Backend

        /// A test Apple and Google (keys of their own) for `db`.
        static func make(_ db: Backend) async throws -> Providers {
            Providers(
                apple: try await TestIdentityIssuer(issuer: "https://appleid.apple.com", audience: "fit.321.ios"),
                google: try await TestIdentityIssuer(issuer: "https://accounts.google.com", audience: "321fit.apps.googleusercontent.com"),
                db: db)
        }

        /// The configuration that accepts their ID tokens.
        func trust(_ configuration: inout LedgerConfiguration) {
            configuration.appleJWKS = apple.jwksPath
            configuration.appleClientIDs = [apple.audience]
            configuration.googleJWKS = google.jwksPath
            configuration.googleClientIDs = [google.audience]
        }

        func appleToken(
            _ subject: String, email: String? = nil, verified: Bool? = nil, relay: Bool? = nil, nonce: String? = nil,
            issuedAt: Date? = nil
        ) async throws -> String {
            try await apple.token(
                subject: subject, email: email, emailVerified: verified, isPrivateEmail: relay, nonce: nonce,
                expires: db.clock.now().addingTimeInterval(600), issuedAt: issuedAt ?? db.clock.now())
        }

        func googleToken(_ subject: String, email: String? = nil, verified: Bool? = nil, nonce: String? = nil) async throws -> String {
            try await google.token(
                subject: subject, email: email, emailVerified: verified, nonce: nonce, expires: db.clock.now().addingTimeInterval(600),
                issuedAt: db.clock.now())
        }

        /// Re-auth as the app does it: a nonce from the service, then a fresh ID token carrying
        /// it (Apple's SDK sends its SHA-256 in hex, Google the nonce itself).
        func reauth(_ client: some TestClientProtocol, _ provider: String, _ subject: String, token access: String) async throws -> Answer {
            let nonce = try #require(try await call(client, .post, "/auth/reauth/nonce", token: access).string("nonce"))
            let idToken =
                provider == "apple"
                ? try await appleToken(subject, nonce: Hex.encode(SHA256.hash(Array(nonce.utf8))))
                : try await googleToken(subject, nonce: nonce)
            return try await call(client, .post, "/auth/reauth/\(provider)", ["id_token": idToken], token: access)
        }

        /// A grant by re-auth with `provider`.
        func grant(_ client: some TestClientProtocol, _ provider: String, _ subject: String, token access: String) async throws -> String {
            try #require(try await reauth(client, provider, subject, token: access).string("reauth_token"))
        }
    }

    func withApp(
        configure: @escaping (inout LedgerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, Providers<MemoryBackend>) async throws -> Void
    ) async throws {
        try await MemoryBackend.with { db in
            let providers = try await Providers.make(db)
            let services = try db.dependencies {
                providers.trust(&$0)
                configure(&$0)
            }
            try await Application(router: buildRouter(services)).test(.router) { client in
                try await body(client, providers)
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

    @Test("a phone-only account linking a provider takes the address it vouches for as its verified email, when nobody holds it")
    func adoptsVouchedAddress() async throws {
        try await withApp { client, providers in
            func link(_ phone: String, _ subject: String, _ email: String, verified: Bool = true) async throws -> Answer {
                let access = try await phoneSignIn(client, providers.db, phone)
                let grant = try await phoneGrant(client, providers.db, token: access, phone: phone)
                let token = try await providers.googleToken(subject, email: email, verified: verified)
                let hub = try await call(
                    client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": token], token: access, reauth: grant)
                #expect(hub.status == .ok && hub.body["google_linked"] as? Bool == true)
                return hub
            }
            let adopted = try await link("+995511200310", "g-phone-1", "ivy@example.com")
            #expect(adopted.string("email") == "ivy@example.com" && adopted.body["email_verified"] as? Bool == true)
            #expect(adopted.body["has_password"] as? Bool == false)
            // Held by another account: linked, the address left where it is.
            _ = try await signUp(client, email: "jo@example.com")
            let held = try await link("+995511200311", "g-phone-2", "jo@example.com")
            #expect(held.body["email"] is NSNull)
            // Not vouched for: not taken.
            let unvouched = try await link("+995511200312", "g-phone-3", "kai@example.com", verified: false)
            #expect(unvouched.body["email"] is NSNull)
        }
    }

    @Test("linking by email: only when both verified it and the account has no password; never a private relay")
    func linkByEmail() async throws {
        try await withApp { client, providers in
            // An account without a password whose address Apple vouched for: Google vouching for
            // the same address signs in to it.
            let cy = try await call(
                client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-cy", email: "cy@example.com", verified: true)])
            #expect(cy.status == .created)
            let joined = try await call(
                client, .post, "/auth/google",
                ["id_token": try await providers.googleToken("g-cy", email: "cy@example.com", verified: true)])
            #expect(joined.status == .ok && joined.string("account_id") == cy.string("account_id"))
            // A verified email + password account is not joined on its own: the password may be
            // whoever registered the address first (or an intruder's). 409 link_required; the
            // password proves it once.
            let ana = try await signUp(client, email: "ana@example.com")
            let me = try await call(client, .get, "/me", token: ana)
            let verifyToken = try await outboxToken(providers.db, template: "verify_email")
            #expect(try await call(client, .post, "/auth/email/verify", ["token": verifyToken]).status == .ok)
            let guarded = try await call(
                client, .post, "/auth/google",
                ["id_token": try await providers.googleToken("g-ana", email: "ana@example.com", verified: true)])
            #expect(guarded.status == .conflict && guarded.string("error") == "link_required")
            #expect(guarded.body["methods"] as? [String] == ["password"])
            let linked = try await call(
                client, .post, "/auth/email/login",
                ["email": "ana@example.com", "password": "violet-harbor-91", "link_token": try #require(guarded.string("link_token"))])
            #expect(linked.status == .ok)
            #expect(linked.string("account_id") == me.string("account_id"))
            #expect(try await call(client, .get, "/me/auth-methods", token: ana).body["google_linked"] as? Bool == true)
            // An unverified account with the address is not taken over, and no second account is
            // made: 409 link_required, and signing in to that account with the token links Google.
            let bo = try await signUp(client, email: "bo@example.com")
            let accounts = try await providers.db.accountCount()
            let required = try await call(
                client, .post, "/auth/google",
                ["id_token": try await providers.googleToken("g-bo", email: "bo@example.com", verified: true)])
            #expect(required.status == .conflict && required.string("error") == "link_required")
            #expect(required.string("email_hint") == "b•••@example.com")
            #expect(required.body["methods"] as? [String] == ["password"])
            #expect(try await providers.db.accountCount() == accounts)
            let linkToken = try #require(required.string("link_token"))
            let wrongPassword = try await call(
                client, .post, "/auth/email/login", ["email": "bo@example.com", "password": "copper-lantern-77", "link_token": linkToken])
            #expect(wrongPassword.status == .unauthorized)
            let proven = try await call(
                client, .post, "/auth/email/login", ["email": "bo@example.com", "password": "violet-harbor-91", "link_token": linkToken])
            #expect(proven.status == .ok)
            #expect(try await call(client, .get, "/me/auth-methods", token: bo).body["google_linked"] as? Bool == true)
            let again = try await call(
                client, .post, "/auth/google",
                ["id_token": try await providers.googleToken("g-bo", email: "bo@example.com", verified: true)])
            #expect(again.status == .ok && again.string("account_id") == proven.string("account_id"))
            // A provider that does not vouch for the address does not link either: its address is
            // no address here (see unvouchedAddress).
            let unverified = try await call(
                client, .post, "/auth/google",
                ["id_token": try await providers.googleToken("g-ana-2", email: "ana@example.com", verified: false)])
            #expect(unverified.status == .created && unverified.string("account_id") != me.string("account_id"))
            // Private relay: never merged.
            let relay = try await call(
                client, .post, "/auth/apple",
                [
                    "id_token": try await providers.appleToken("a-ana", email: "ana@example.com", verified: true, relay: true)
                ])
            #expect(relay.status == .created)
        }
    }

    @Test(
        "an address the provider does not vouch for is no address: it links nothing, gets no link_token, and is not kept, so no squatter sits on it"
    )
    func unvouchedAddress() async throws {
        try await withApp { client, providers in
            // A squatter registers someone's address with a password (never verified), then signs
            // in with a Google account claiming that address unverified: no link_token to attach
            // Google to the squatted account (its grant would then turn two-factor on).
            let squatter = try await signUp(client, email: "dana@example.com")
            let claimed = try await providers.googleToken("g-squat", email: "dana@example.com", verified: false)
            let answer = try await call(client, .post, "/auth/google", ["id_token": claimed])
            #expect(answer.status == .created && answer.string("link_token") == nil)
            let hub = try await call(client, .get, "/me/auth-methods", token: squatter)
            #expect(hub.body["google_linked"] as? Bool == false)
            let googleAccount = try #require(answer.string("access_token"))
            #expect(try await call(client, .get, "/me", token: googleAccount).body["email"] is NSNull)

            // A Google sign-up claiming a free address unverified keeps no address: its owner signs
            // up with it later.
            let other = try await providers.googleToken("g-other", email: "eli@example.com", verified: false)
            let created = try await call(client, .post, "/auth/google", ["id_token": other])
            #expect(created.status == .created)
            #expect(try await call(client, .get, "/me", token: try #require(created.string("access_token"))).body["email"] is NSNull)
            #expect(
                try await call(client, .post, "/auth/email/signup", ["email": "eli@example.com", "password": "violet-harbor-91"]).status
                    == .created)
        }
    }

    @Test("a link_token lasts 15 minutes, is ours only, and links only to the account that holds the email")
    func linkToken() async throws {
        try await withApp { client, providers in
            let db = providers.db
            _ = try await signUp(client, email: "cy@example.com")
            func required() async throws -> String {
                let answer = try await call(
                    client, .post, "/auth/apple",
                    ["id_token": try await providers.appleToken("a-cy", email: "cy@example.com", verified: true)])
                #expect(answer.status == .conflict)
                return try #require(answer.string("link_token"))
            }
            let stale = try await required()
            db.clock.advance(by: 15 * 60)
            let expired = try await call(
                client, .post, "/auth/email/login", ["email": "cy@example.com", "password": "violet-harbor-91", "link_token": stale])
            #expect(expired.status == .gone && expired.string("error") == "link_expired")
            // One character changed in the middle (the last one may only carry padding bits).
            var altered = Array(try await required())
            altered[20] = altered[20] == "A" ? "B" : "A"
            #expect(
                try await call(
                    client, .post, "/auth/email/login",
                    ["email": "cy@example.com", "password": "violet-harbor-91", "link_token": String(altered)]
                )
                .status == .gone)
            // A token links only to the account that holds the email: another account proven with it
            // (here a phone sign-in) gets 409 link_mismatch, its new session ended, and nothing linked.
            let token = try await required()
            let requestID = try await requestOTP(client, "+995511200302")
            let elsewhere = try await call(
                client, .post, "/auth/phone/verify-otp",
                ["request_id": requestID, "code": try await otpCode(db, phone: "+995511200302"), "link_token": token])
            #expect(elsewhere.status == .conflict && elsewhere.string("error") == "link_mismatch")
            let proven = try await call(
                client, .post, "/auth/email/login", ["email": "cy@example.com", "password": "violet-harbor-91", "link_token": token])
            #expect(proven.status == .ok)
            let hub = try await call(client, .get, "/me/auth-methods", token: proven.string("access_token") ?? "")
            #expect(hub.body["apple_linked"] as? Bool == true)
        }
    }

    @Test("link: an identity owned by another account is 409 provider_in_use; a free one shows on the hub")
    func link() async throws {
        try await withApp { client, providers in
            _ = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-owner")])
            let ana = try await signUp(client, email: "ana@example.com")
            // A stolen session cannot connect the thief's own Google account, then re-auth with it.
            let stolen = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-eve")],
                token: ana)
            #expect(stolen.status == .forbidden)
            #expect(stolen.string("error") == "reauth_required")
            // Nor with a grant from the password of an address nobody has verified yet.
            let byPassword = try await passwordGrant(client, token: ana)
            #expect(
                try await call(
                    client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-eve")],
                    token: ana,
                    reauth: byPassword
                ).status == .forbidden)
            let grant = try await emailLinkGrant(client, providers.db, token: ana)
            let taken = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "apple", "id_token": try await providers.appleToken("a-owner")],
                token: ana,
                reauth: grant)
            #expect(taken.status == .conflict)
            #expect(taken.string("error") == "provider_in_use")
            let hub = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-ana")],
                token: ana,
                reauth: grant)
            #expect(hub.status == .ok)
            #expect(hub.body["google_linked"] as? Bool == true)
            #expect(
                try await call(
                    client, .post, "/me/auth-methods/link", ["provider": "yahoo", "id_token": "x"], token: ana, reauth: grant
                ).status == .unprocessableContent)
        }
    }

    @Test("disconnect: the last method is 409 with the product copy, grant or not; otherwise re-auth first")
    func disconnect() async throws {
        try await withApp { client, providers in
            let created = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")])
            let access = try #require(created.string("access_token"))
            let unknown = try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "myspace"], token: access)
            #expect(unknown.status == .unprocessableContent && unknown.problemCodes == ["invalid_provider"])
            let last = try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "apple"], token: access)
            #expect(last.status == .conflict)
            #expect(last.string("error") == "last_method")
            #expect(
                last.string("message")
                    == "This is your only sign-in method. Add a phone number, email, or another provider first — then you can disconnect Apple."
            )
            // Google likewise.
            let googleOnly = try #require(
                try await call(client, .post, "/auth/google", ["id_token": try await providers.googleToken("g-only")]).string(
                    "access_token"))
            let lastGoogle = try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "google"], token: googleOnly)
            #expect(lastGoogle.status == .conflict)
            #expect(
                lastGoogle.string("message")
                    == "This is your only sign-in method. Add a phone number, email, or another provider first — then you can disconnect Google."
            )
            let grant = try await providers.reauth(client, "apple", "a-1", token: access)
            #expect(grant.status == .ok)
            let reauth = try #require(grant.string("reauth_token"))
            #expect(
                try await call(client, .post, "/me/auth-methods/disconnect", ["provider": "apple"], token: access, reauth: reauth).status
                    == .conflict)
            // Another account's Apple identity is no re-auth for this one.
            #expect(try await providers.reauth(client, "apple", "a-2", token: access).status == .unauthorized)
            _ = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-1")],
                token: access,
                reauth: reauth)
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
            let appleGrant = try await providers.grant(client, "apple", "a-1", token: access)
            _ = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-1")],
                token: access,
                reauth: appleGrant)
            let reauth = try await providers.grant(client, "google", "g-1", token: access)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for provider in ["apple", "google", "apple", "google"] {
                    group.addTask {
                        try await call(client, .post, "/me/auth-methods/disconnect", ["provider": provider], token: access, reauth: reauth)
                            .status
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

    @Test(
        "a deleted account's Apple identity may not sign up again, nor join another account, nor its address come back by Google, for 7 days"
    )
    func cooldown() async throws {
        try await withApp { client, providers in
            let created = try await call(
                client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1", email: "ana@example.com", verified: true)])
            let access = try #require(created.string("access_token"))
            let reauth = try await providers.grant(client, "apple", "a-1", token: access)
            #expect(try await call(client, .delete, "/me", token: access, reauth: reauth).status == .accepted)
            providers.db.clock.advance(by: 6 * 86400)
            let refused = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")])
            #expect(refused.status == .conflict)
            #expect(refused.string("error") == "signup_cooldown")
            // Nor through another account: connecting it, or signing in with it by a verified email that account holds.
            let bob = try await signUp(client, email: "bob@example.com")
            #expect(
                try await call(
                    client, .post, "/auth/email/verify", ["token": try await outboxToken(providers.db, template: "verify_email")]
                ).status == .ok)
            let bobGrant = try await passwordGrant(client, token: bob)
            let linked = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "apple", "id_token": try await providers.appleToken("a-1")],
                token: bob,
                reauth: bobGrant)
            #expect(linked.status == .conflict)
            #expect(linked.string("error") == "signup_cooldown")
            let byEmail = try await call(
                client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1", email: "bob@example.com", verified: true)])
            #expect(byEmail.string("error") == "signup_cooldown")
            #expect(try await call(client, .get, "/me/auth-methods", token: bob).body["apple_linked"] as? Bool == false)
            // Nor may its address come back through another provider within the cooldown.
            let google = try await call(
                client, .post, "/auth/google",
                ["id_token": try await providers.googleToken("g-ana", email: "ana@example.com", verified: true)])
            #expect(google.status == .conflict && google.string("error") == "signup_cooldown")
            providers.db.clock.advance(by: 86401)
            #expect(try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")]).status == .created)
        }
    }

    /// The service with Apple's JWKS served over HTTP (`cacheControl` on the answer), counting fetches.
    func withJWKSOverHTTP(
        cacheControl: String? = nil,
        _ body: @escaping @Sendable (any TestClientProtocol, MemoryBackend, TestIdentityIssuer, Counter) async throws -> Void
    ) async throws {
        try await MemoryBackend.with { db in
            let apple = try await TestIdentityIssuer(issuer: "https://appleid.apple.com", audience: "fit.321.ios")
            let fetches = Counter()
            let jwksRouter = Router()
            jwksRouter.get("/auth/keys") { _, _ -> Response in
                fetches.increment()
                var headers: HTTPFields = [.contentType: "application/json"]
                if let cacheControl { headers[.cacheControl] = cacheControl }
                let data = try Data(contentsOf: URL(fileURLWithPath: apple.jwksPath))
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
            }
            try await Application(router: jwksRouter).test(.live) { jwksServer in
                let port = try #require(jwksServer.port)
                let services = try db.dependencies {
                    $0.appleJWKS = "http://127.0.0.1:\(port)/auth/keys"
                    $0.appleClientIDs = [apple.audience]
                }
                try await Application(router: buildRouter(services)).test(.router) { client in
                    try await body(client, db, apple, fetches)
                }
            }
        }
    }

    /// Signs in with a new token of `apple` signed by `keyID`; the answer's status.
    func appleSignIn(
        _ client: some TestClientProtocol, _ db: some TestBackend, _ apple: TestIdentityIssuer, subject: String, keyID: String
    ) async throws -> HTTPResponse.Status {
        let token = try await apple.token(
            subject: subject, expires: db.clock.now().addingTimeInterval(600), issuedAt: db.clock.now(), keyID: keyID)
        return try await call(client, .post, "/auth/apple", ["id_token": token]).status
    }

    @Test(
        "an Apple account whose address came from Apple adds a password for it (re-auth first) and then signs in with it; another address is email_exists"
    )
    func passwordForProviderAddress() async throws {
        try await withApp { client, providers in
            let access = try #require(
                try await call(
                    client, .post, "/auth/apple",
                    ["id_token": try await providers.appleToken("a-pw", email: "pia@example.com", verified: true)]
                ).string("access_token"))
            let body = ["email": "pia@example.com", "password": "copper-lantern-77"]
            let stolen = try await call(client, .post, "/auth/email/add-with-password", body, token: access)
            #expect(stolen.status == .forbidden && stolen.string("error") == "reauth_required")
            let grant = try await providers.grant(client, "apple", "a-pw", token: access)
            let other = try await call(
                client, .post, "/auth/email/add-with-password", ["email": "pia2@example.com", "password": "copper-lantern-77"],
                token: access, reauth: grant)
            #expect(other.status == .conflict && other.string("error") == "email_exists")
            let added = try await call(client, .post, "/auth/email/add-with-password", body, token: access, reauth: grant)
            #expect(added.status.code < 300)
            let hub = try await call(client, .get, "/me/auth-methods", token: access)
            #expect(hub.body["has_password"] as? Bool == true && hub.body["email_verified"] as? Bool == true)
            #expect(try await logIn(client, email: "pia@example.com", password: "copper-lantern-77").isEmpty == false)
            // Now it has a password: adding one again is a change, not an add.
            let again = try await call(client, .post, "/auth/email/add-with-password", body, token: access, reauth: grant)
            #expect(again.status == .conflict && again.string("error") == "email_exists")
        }
    }

    @Test("the JWKS is fetched from a URL too, and fetched again for a new key id")
    func jwksOverHTTP() async throws {
        try await withJWKSOverHTTP { client, db, apple, _ in
            try apple.publish([TestIdentityIssuer.rsaKeyID])
            #expect(try await appleSignIn(client, db, apple, subject: "a-url", keyID: TestIdentityIssuer.rsaKeyID) == .created)
            try apple.publish([TestIdentityIssuer.rsaKeyID, TestIdentityIssuer.ecKeyID])
            db.clock.advance(by: 61)
            #expect(try await appleSignIn(client, db, apple, subject: "a-url", keyID: TestIdentityIssuer.ecKeyID) == .ok)
        }
    }

    @Test("re-auth by Apple or Google: only a fresh token carrying a nonce this session asked for, once")
    func reauthNonce() async throws {
        try await withApp { client, providers in
            let access = try #require(
                try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")]).string("access_token"))
            _ = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-1")],
                token: access,
                reauth: try await providers.grant(client, "apple", "a-1", token: access))
            func expectRefused(_ answer: Answer, _ comment: Comment) {
                #expect(answer.status == .unauthorized, comment)
                #expect(answer.string("error") == "invalid_token", comment)
            }
            // An ID token without a nonce (one lifted from a sign-in) is no re-auth.
            expectRefused(
                try await call(client, .post, "/auth/reauth/apple", ["id_token": try await providers.appleToken("a-1")], token: access),
                "no nonce")
            let issued = try await call(client, .post, "/auth/reauth/nonce", token: access)
            #expect(issued.status == .ok)
            let nonce = try #require(issued.string("nonce"))
            #expect(issued.string("expires_at") == RFC3339.format(providers.db.clock.now().addingTimeInterval(300)))
            // A made-up nonce, and a token issued more than 5 minutes ago.
            expectRefused(
                try await call(
                    client, .post, "/auth/reauth/google", ["id_token": try await providers.googleToken("g-1", nonce: "made-up")],
                    token: access), "unknown nonce")
            expectRefused(
                try await call(
                    client, .post, "/auth/reauth/apple",
                    [
                        "id_token": try await providers.appleToken(
                            "a-1", nonce: nonce, issuedAt: providers.db.clock.now().addingTimeInterval(-301))
                    ], token: access), "stale iat")
            // Another session of the account cannot use this session's nonce.
            let other = try #require(
                try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")]).string("access_token"))
            expectRefused(
                try await call(
                    client, .post, "/auth/reauth/google", ["id_token": try await providers.googleToken("g-1", nonce: nonce)], token: other),
                "other session")
            // The raw nonce works once; the same nonce again does not.
            let good = try await call(
                client, .post, "/auth/reauth/google", ["id_token": try await providers.googleToken("g-1", nonce: nonce)], token: access)
            #expect(good.status == .ok)
            expectRefused(
                try await call(
                    client, .post, "/auth/reauth/google", ["id_token": try await providers.googleToken("g-1", nonce: nonce)], token: access),
                "reused")
            // A nonce lasts 5 minutes.
            let late = try #require(try await call(client, .post, "/auth/reauth/nonce", token: access).string("nonce"))
            providers.db.clock.advance(by: 301)
            expectRefused(
                try await call(
                    client, .post, "/auth/reauth/google", ["id_token": try await providers.googleToken("g-1", nonce: late)], token: access),
                "expired")
            #expect(try await call(client, .post, "/auth/reauth/nonce").status == .unauthorized)
        }
    }

    @Test("the JWKS cache keeps keys for the answer's max-age, then drops the ones the provider removed")
    func jwksRemovedKey() async throws {
        try await withJWKSOverHTTP(cacheControl: "public, max-age=120") { client, db, apple, fetches in
            func signIn() async throws -> HTTPResponse.Status {
                try await appleSignIn(client, db, apple, subject: "a-rotated", keyID: TestIdentityIssuer.ecKeyID)
            }
            #expect(try await signIn() == .created)
            // Apple removes the key (it leaked, say).
            try apple.publish([TestIdentityIssuer.rsaKeyID])
            db.clock.advance(by: 119)
            #expect(try await signIn() == .ok, "kept for max-age")
            #expect(fetches.value == 1)
            db.clock.advance(by: 2)
            #expect(try await signIn() == .unauthorized, "dropped once max-age is over")
            #expect(fetches.value == 2)
            // Unknown key ids do not make the service fetch more than once a minute.
            for _ in 0..<5 { #expect(try await signIn() == .unauthorized) }
            #expect(fetches.value == 2)
        }
    }
}

/// A count shared with a route handler.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
