import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import Testing

@Suite("HTTP: Sign in with Apple server-to-server notifications", .timeLimit(.minutes(10)))
struct AppleNotificationTests {
    typealias Providers = ProviderEndpointTests.Providers<MemoryBackend>

    func notify(
        _ client: some TestClientProtocol, _ providers: Providers, _ type: String, _ subject: String, id: String = UUID().uuidString,
        issuer: TestIdentityIssuer? = nil, audience: String? = nil, age: TimeInterval = 0
    ) async throws -> Answer {
        let payload = try await (issuer ?? providers.apple).appleNotification(
            type: type, subject: subject, id: id, audience: audience, issuedAt: providers.db.clock.now().addingTimeInterval(-age))
        return try await call(client, .post, "/webhooks/apple", ["payload": payload])
    }

    func count(_ providers: Providers, _ type: String) async throws -> Int {
        try await providers.db.storedEventCount(type: type)
    }

    @Test("consent-revoked ends every session and unlinks Apple, but keeps it when it is the only way in; once per notification")
    func consentRevoked() async throws {
        try await ProviderEndpointTests().withApp { client, providers in
            // Apple only: kept, signed out everywhere.
            let only = try #require(
                try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-only")]).string("access_token"))
            let id = UUID().uuidString
            #expect(try await notify(client, providers, "consent-revoked", "a-only", id: id).status == .ok)
            #expect(try await call(client, .get, "/me", token: only).status == .unauthorized)
            let again = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-only")])
            #expect(again.status == .ok)
            // The same notification again acts no more: the new session lives.
            #expect(try await notify(client, providers, "consent-revoked", "a-only", id: id).status == .ok)
            #expect(try await call(client, .get, "/me", token: again.string("access_token") ?? "").status == .ok)
            #expect(try await count(providers, "apple.notification_received") == 1)

            // Apple beside a password: unlinked.
            let ana = try await signUp(client, email: "ana@example.com")
            let grant = try await emailLinkGrant(client, providers.db, token: ana)
            _ = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "apple", "id_token": try await providers.appleToken("a-ana")],
                token: ana,
                reauth: grant)
            #expect(try await notify(client, providers, "consent-revoked", "a-ana").status == .ok)
            #expect(try await call(client, .get, "/me", token: ana).status == .unauthorized)
            let hub = try await call(client, .get, "/me/auth-methods", token: try await logIn(client, email: "ana@example.com"))
            #expect(hub.body["apple_linked"] as? Bool == false)
        }
    }

    @Test("account-delete schedules the deletion, or disables the account when holds block it; email-disabled is recorded")
    func accountDelete() async throws {
        try await ProviderEndpointTests().withApp { client, providers in
            let gone = try #require(
                try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-gone")]).string("access_token"))
            let goneID = try #require(try await call(client, .get, "/me", token: gone).string("account_id"))
            #expect(try await notify(client, providers, "email-disabled", "a-gone").status == .ok)
            #expect(try await notify(client, providers, "account-delete", "a-gone").status == .ok)
            #expect(try await providers.db.state(of: try #require(UUID(uuidString: goneID))).isDeleted)
            #expect(try await count(providers, "account.deletion_scheduled") == 1)
            #expect(try await count(providers, "apple.notification_received") == 2)

            // With a payout pending: disabled, and the event says why.
            let coach = try #require(
                try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-coach")]).string("access_token")
            )
            let coachID = try #require(try await call(client, .get, "/me", token: coach).string("account_id"))
            let holds = try await providers.db.apiKeys.create(name: "payouts", scopes: [.holdsWrite]).key
            #expect(
                try await call(
                    client, .put, "/accounts/\(coachID)/holds/p1", ["kind": "pending_payout"], token: holds,
                    path: "/accounts/{id}/holds/{ref}"
                ).status == .ok)
            #expect(try await notify(client, providers, "account-delete", "a-coach").status == .ok)
            let signIn = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-coach")])
            #expect(signIn.status == .forbidden && signIn.string("error") == "account_disabled")
            #expect(try await count(providers, "account.disabled") == 1)
            #expect(try await count(providers, "account.deletion_scheduled") == 1)
        }
    }

    @Test("an account-delete a day late still deletes; replayed after a re-signup with the same Apple ID, it acts no more")
    func lateAndReplayed() async throws {
        let shortCooldown: (inout LedgerConfiguration) -> Void = { $0.policies.signupCooldown = 60 }
        try await ProviderEndpointTests().withApp(configure: shortCooldown) { client, providers in
            _ = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-late")])
            let payload = try await providers.apple.appleNotification(
                type: "account-delete", subject: "a-late", issuedAt: providers.db.clock.now().addingTimeInterval(-23 * 3600))
            #expect(try await call(client, .post, "/webhooks/apple", ["payload": payload]).status == .ok)
            #expect(try await count(providers, "account.deletion_scheduled") == 1)
            // The cooldown over, the person signs up again with the same Apple ID; the captured
            // notification, still within its day, deletes nothing.
            providers.db.clock.advance(by: 61)
            let again = try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-late")])
            #expect(again.status == .created)
            #expect(try await call(client, .post, "/webhooks/apple", ["payload": payload]).status == .ok)
            #expect(try await count(providers, "account.deletion_scheduled") == 1)
            #expect(try await call(client, .get, "/me", token: try #require(again.string("access_token"))).status == .ok)
        }
    }

    @Test("what is not Apple's is 400 and changes nothing: another key, another audience, garbage; an unknown Apple ID is 200")
    func refused() async throws {
        try await ProviderEndpointTests().withApp { client, providers in
            let access = try #require(
                try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-1")]).string("access_token"))
            let forger = try await TestIdentityIssuer(issuer: "https://appleid.apple.com", audience: "fit.321.ios")
            let forged = try await notify(client, providers, "consent-revoked", "a-1", issuer: forger)
            #expect(forged.status == .badRequest && forged.string("error") == "invalid_notification")
            #expect(try await notify(client, providers, "consent-revoked", "a-1", audience: "com.other.app").status == .badRequest)
            #expect(try await call(client, .post, "/webhooks/apple", ["payload": "not.a.jws"]).status == .badRequest)
            #expect(try await call(client, .post, "/webhooks/apple", ["payload": 42]).status == .badRequest)
            #expect(try await call(client, .get, "/me", token: access).status == .ok)
            #expect(try await notify(client, providers, "consent-revoked", "a-nobody").status == .ok)
            #expect(try await notify(client, providers, "some-new-type", "a-1").status == .ok)
            #expect(try await call(client, .get, "/me", token: access).status == .ok)
            // A notification over a day old is a replay, whoever kept it; a late one (an outage) acts.
            #expect(try await notify(client, providers, "consent-revoked", "a-1", age: 86_401).status == .badRequest)
            #expect(try await call(client, .get, "/me", token: access).status == .ok)
            #expect(try await notify(client, providers, "consent-revoked", "a-1", age: 86_399).status == .ok)
            #expect(try await call(client, .get, "/me", token: access).status == .unauthorized)
            #expect(try await count(providers, "apple.notification_received") == 1)
        }
    }

    @Test(
        "a service without Apple's client ids answers 503 to a signed notification (it could not be checked), 400 to what is no JWS at all")
    func unconfigured() async throws {
        try await MemoryBackend.with { db in
            let apple = try await TestIdentityIssuer(issuer: "https://appleid.apple.com", audience: "fit.321.ios")
            try await testApplication(db).test(.router) { client in
                let payload = try await apple.appleNotification(type: "consent-revoked", subject: "a-1", issuedAt: db.clock.now())
                let answer = try await call(client, .post, "/webhooks/apple", ["payload": payload])
                #expect(answer.status == .serviceUnavailable && answer.headers[.retryAfter] == "60")
                for garbage in ["a.b.c", "garbage", ""] {
                    let refused = try await call(client, .post, "/webhooks/apple", ["payload": garbage])
                    #expect(refused.status == .badRequest && refused.string("error") == "invalid_notification", "\(garbage)")
                }
            }
        }
    }
}
