import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerDelivery
import LedgerIdentity
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import LedgerWebAuthnTesting
import LedgerWorkers
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

// MARK: - Passkeys

extension AtRestTests {
    @Test("the feed and the export leave out a passkey's credential id, key and user handle")
    func feedHidesIdentifiers() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(
                url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey, configure: PasskeyEndpointTests.relyingParty)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let passkeys = PasskeyEndpointTests()
                let (access, grant) = try await passkeys.account(client, db)
                let (credential, _) = try await passkeys.register(client, SoftAuthenticator(), token: access, grant: grant)
                let committed = try await db.client.query("SELECT count(*) FROM events")
                try await services.eventStore.waitForFeed(count: Int(try committed[0].int(0) ?? 0))
                let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
                let raw = try await client.execute(uri: "/events?limit=1000", method: .get, headers: bearer(reader)) {
                    String(buffer: $0.body)
                }
                #expect(raw.contains("passkey.registered") && raw.contains("passkey_id"))
                for hidden in [
                    "credential_id", "public_key", "user_handle", Base64URL.encode(credential.id), Base64URL.encode(credential.userHandle),
                ] {
                    #expect(!raw.contains(hidden), "\(hidden)")
                }
                let export = try await client.execute(uri: "/me/export", method: .get, headers: bearer(access)) { String(buffer: $0.body) }
                #expect(export.contains("passkey.registered") && !export.contains(Base64URL.encode(credential.id)))
            }
        }
    }

    @Test("a deleted account's passkey leaves no lookup row: the key itself is in the sealed events, gone at the purge")
    func passkeyRowDeleted() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApplication(db, configure: PasskeyEndpointTests.relyingParty).test(.router) { client in
                let passkeys = PasskeyEndpointTests()
                let (access, grant) = try await passkeys.account(client, db)
                _ = try await passkeys.register(client, SoftAuthenticator(), token: access, grant: grant)
                #expect(try await db.client.query("SELECT count(*) FROM passkey_credentials")[0].int(0) == 1)
                #expect(try await call(client, .delete, "/me", token: access, reauth: grant).status == .accepted)
                #expect(try await db.client.query("SELECT count(*) FROM passkey_credentials")[0].int(0) == 0)
            }
        }
    }

    @Test("a forged passkey challenge writes nothing: no spent challenge is recorded for it")
    func forgedChallengeWritesNothing() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApplication(db, configure: PasskeyEndpointTests.relyingParty).test(.router) { client in
                let passkeys = PasskeyEndpointTests()
                let (access, grant) = try await passkeys.account(client, db)
                let authenticator = SoftAuthenticator()
                let (credential, _) = try await passkeys.register(client, authenticator, token: access, grant: grant)
                let spentBefore = try await db.client.query("SELECT count(*) FROM spent_passkey_challenges")[0].int(0)
                for _ in 0..<5 {
                    let forged = authenticator.getAssertion(credential: credential, challenge: Array(repeating: 9, count: 90))
                    #expect(
                        try await call(
                            client, .post, "/auth/passkey/login", ["credential": try PasskeyEndpointTests.object(forged.jsonBytes())]
                        ).status == .unauthorized)
                }
                #expect(try await db.client.query("SELECT count(*) FROM spent_passkey_challenges")[0].int(0) == spentBefore)
            }
        }
    }
}

// MARK: - Two-factor authentication

extension AtRestTests {
    @Test("the event feed and the export show the two-factor events without the secret")
    func feedHidesSecret() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(
                url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey, configure: TwoFactorEndpointTests.manyFailures)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let (access, secret) = try await TwoFactorEndpointTests().signUpWithTOTP(client, db, email: "fay@example.com")
                _ = try await call(client, .post, "/auth/email/login", ["email": "fay@example.com", "password": "violet-harbor-91"])
                let committed = try await db.client.query("SELECT count(*) FROM events")
                try await services.eventStore.waitForFeed(count: Int(try committed[0].int(0) ?? 0))
                let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
                let raw = try await client.execute(uri: "/events?limit=1000", method: .get, headers: bearer(reader)) {
                    String(buffer: $0.body)
                }
                #expect(
                    raw.contains("mfa.totp_enrolment_started") && raw.contains("mfa.challenge_issued") && raw.contains("mfa.totp_enabled"))
                let key = try #require(TOTPCodes.secret(fromBase32: secret))
                #expect(!raw.contains("totp_secret") && !raw.contains(key))
                #expect(!raw.contains("recovery_codes_sha256") && !raw.contains("link_token"))
                // The person's own export leaves it out too: a stolen session must not read the seed.
                let export = try await client.execute(uri: "/me/export", method: .get, headers: bearer(access)) { String(buffer: $0.body) }
                #expect(export.contains("mfa.totp_enrolment_started") && !export.contains(key) && !export.contains("totp_secret"))
            }
        }
    }

    @Test("a TOTP secret, on and then off again, is never stored in the clear; after a purge nothing can read it back")
    func totpSecretSealed() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(
                url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey, configure: TwoFactorEndpointTests.manyFailures)
            try await Application(router: buildRouter(services)).test(.router) { client in
                // As TwoFactorEndpointTests.reauthDisableAndPurge: on, a re-auth by a code, off again.
                let twoFactor = TwoFactorEndpointTests()
                let access = try await signUp(client, email: "eve@example.com")
                let grant = try await emailLinkGrant(client, db, token: access)
                let (secret, _) = try await twoFactor.enrol(client, db, token: access, grant: grant)
                db.clock.advance(by: 30)
                let granted = try await call(client, .post, "/auth/reauth/totp", ["code": try twoFactor.code(secret, db)], token: access)
                let totpGrant = try #require(granted.string("reauth_token"))
                let off = try await call(client, .delete, "/me/mfa/totp", token: access, reauth: totpGrant)
                #expect(off.status == .ok)

                // The secret was never stored in the clear; after a purge nothing can read it back.
                let raw = try #require(TOTPCodes.secret(fromBase32: secret))
                let clear = try await db.client.rowsHolding(raw) + (try await db.client.rowsHolding(secret))
                #expect(clear == 0)
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                #expect(try await call(client, .delete, "/me", token: access, reauth: grant).status.code < 300)
                db.clock.advance(by: services.configuration.policies.purgeDelay + 1)
                _ = try await PurgeWorker(store: services.eventStore, clock: db.clock).runOnce()
                let history = try await services.eventStore.readStream(try #require(UUID(uuidString: accountID)))
                #expect(history.allSatisfy { $0.payload == nil || $0.type == "account.purged" })
            }
        }
    }

    @Test("a purge deletes the attempt counters named after the account")
    func countersPurged() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(
                url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey, configure: TwoFactorEndpointTests.fiveADay)
            try await Application(router: buildRouter(services)).test(.router) { client in
                // As TwoFactorEndpointTests.dailyCapPerSession: wrong TOTP re-auths, then a sign-in with both factors.
                let twoFactor = TwoFactorEndpointTests()
                let (access, secret) = try await twoFactor.signUpWithTOTP(client, db, email: "ed@example.com")
                db.clock.advance(by: 30)
                for _ in 0..<5 {
                    _ = try await call(
                        client, .post, "/auth/reauth/totp", ["code": try twoFactor.code(secret, db, steps: 7)], token: access)
                }
                let login = ["email": "ed@example.com", "password": "violet-harbor-91"]
                let token = try twoFactor.mfaToken(try await call(client, .post, "/auth/email/login", login))
                #expect(try await twoFactor.verify(client, token, code: try twoFactor.code(secret, db)).status == .ok)

                // The counters named after the account go with a purge.
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let counted = "SELECT count(*) FROM login_throttle WHERE key LIKE '%' || $1"
                #expect(try await db.client.query(counted, [.text(accountID)])[0].int(0) ?? 0 > 0)
                let grant = try await emailLinkGrant(client, db, token: access)
                #expect(try await call(client, .delete, "/me", token: access, reauth: grant).status.code < 300)
                db.clock.advance(by: services.configuration.policies.purgeDelay + 1)
                _ = try await PurgeWorker(store: services.eventStore, clock: db.clock).runOnce()
                #expect(try await db.client.query(counted, [.text(accountID)])[0].int(0) == 0)
            }
        }
    }
}

// MARK: - Provider tokens

extension AtRestTests {
    /// `ProviderTokenEndpointTests`' app on a test database, with the delivery dispatcher that
    /// revokes tokens through the outbox.
    struct ProviderTokenSetup {
        let providers: ProviderEndpointTests.Providers<TestDatabase>
        let fake: FakeProviderServer
        let services: LedgerServices
        let dispatcher: DeliveryDispatcher
        var db: TestDatabase { providers.db }

        /// Every event's type and data, as an `events:read` consumer reads them once the feed
        /// shows everything committed.
        func feed(_ client: some TestClientProtocol) async throws -> [(type: String, data: [String: Any])] {
            let committed = try await db.client.query("SELECT count(*) FROM events")
            try await services.eventStore.waitForFeed(count: Int(try committed[0].int(0) ?? 0))
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            let page = try await call(client, .get, "/events?limit=1000", token: reader)
            return (page.body["events"] as? [[String: Any]] ?? []).map {
                ($0["type"] as? String ?? "", $0["data"] as? [String: Any] ?? [:])
            }
        }
    }

    /// Emails and texts are accepted and forgotten: these tests follow the revocations.
    struct AcceptingSink: DeliverySink {
        func deliver(_ message: OutboxMessage) async throws {}
    }

    func withProviderTokenApp(_ body: @escaping @Sendable (any TestClientProtocol, ProviderTokenSetup) async throws -> Void) async throws {
        try await TestPostgres.withDatabase { db in
            let providers = try await ProviderEndpointTests.Providers.make(db)
            let fake = try FakeProviderServer(clock: db.clock)
            try await fake.serve {
                let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                    providers.trust(&$0)
                    ProviderTokenEndpointTests.tokenEndpoints(of: fake, &$0)
                }
                let dispatcher = DeliveryDispatcher(
                    client: db.client, sink: AcceptingSink(),
                    revocations: ProviderRevocationSink(revocations: services.revocations, client: services.providerTokens),
                    clock: db.clock)
                try await Application(router: buildRouter(services)).test(.router) { client in
                    try await body(client, ProviderTokenSetup(providers: providers, fake: fake, services: services, dispatcher: dispatcher))
                }
            }
        }
    }

    @Test("an Apple sign-in's refresh token: the feed shows provider.tokens_stored without it, no table holds it in the clear")
    func appleTokenSealed() async throws {
        try await withProviderTokenApp { client, setup in
            let idToken = try await setup.providers.appleToken("001.ana", email: "ana@example.com", verified: true)
            let created = try await call(
                client, .post, "/auth/apple", ["id_token": idToken, "authorization_code": setup.fake.code(for: "001.ana")])
            #expect(created.status == .created)
            let refreshToken = try #require(setup.fake.issuedTokens.first)
            let stored = try await setup.feed(client).filter { $0.type == "provider.tokens_stored" }
            #expect(stored.count == 1)
            #expect(stored.first?.data["provider"] as? String == "apple" && stored.first?.data["client_id"] as? String == "fit.321.ios")
            #expect(stored.first?.data["subject"] as? String == "001.ana" && stored.first?.data["refresh_token"] == nil)
            #expect(try await setup.db.client.rowsHolding(refreshToken) == 0)
        }
    }

    @Test(
        "disconnecting revokes that provider's token and deleting the account revokes the rest, through the outbox: sealed there, retried after a failure, blanked once delivered"
    )
    func revokedOnDisconnectAndDeletion() async throws {
        try await withProviderTokenApp { client, setup in
            let providers = setup.providers
            let access = try #require(
                try await call(
                    client, .post, "/auth/apple",
                    ["id_token": try await providers.appleToken("a-1"), "authorization_code": setup.fake.code(for: "a-1")]
                ).string("access_token"))
            let appleGrant = try await providers.grant(client, "apple", "a-1", token: access)
            let linked = try await call(
                client, .post, "/me/auth-methods/link",
                [
                    "provider": "google", "id_token": try await providers.googleToken("g-1"),
                    "authorization_code": setup.fake.code(for: "g-1"),
                ], token: access, reauth: appleGrant)
            #expect(linked.status == .ok)
            let tokens = setup.fake.issuedTokens
            #expect(tokens.count == 2 && setup.fake.refusals.isEmpty)

            let googleGrant = try await providers.grant(client, "google", "g-1", token: access)
            let hub = try await call(
                client, .post, "/me/auth-methods/disconnect", ["provider": "apple"], token: access, reauth: googleGrant)
            #expect(hub.status == .ok)
            let queued = try await setup.db.client.query("SELECT recipient, token FROM outbox WHERE channel = 'provider'")
            #expect(queued.rowCount == 1 && queued[0].string(0) == "apple")
            #expect(try await setup.db.client.rowsHolding(tokens[0]) == 0)
            // Apple is down for the first try; the retry after the backoff goes through.
            setup.fake.fail(1)
            try await setup.dispatcher.runOnce()
            #expect(setup.fake.revocations.isEmpty)
            setup.db.clock.advance(by: DeliveryDispatcher.backoff(afterAttempt: 1) + 1)
            #expect(try await setup.dispatcher.runOnce() == 1)
            #expect(setup.fake.revocations.map(\.provider) == ["apple"] && setup.fake.revocations.map(\.token) == [tokens[0]])
            let delivered = try await setup.db.client.query(
                "SELECT count(*) FROM outbox WHERE channel = 'provider' AND delivered_at IS NOT NULL AND token IS NULL AND recipient IS NULL"
            )
            #expect(try delivered[0].int(0) == 1)

            let deleted = try await call(client, .delete, "/me", token: access, reauth: googleGrant)
            #expect(deleted.status == .ok || deleted.status == .accepted)
            let revoked = try await setup.feed(client).filter { $0.type == "provider.token_revoked" }.map { $0.data["reason"] as? String }
            #expect(revoked == ["disconnected", "account_deleted"])
            // Google is down until after the purge: the purge leaves the revocation in the outbox.
            setup.fake.fail(1)
            try await setup.dispatcher.runOnce()
            setup.db.clock.advance(by: Policies.standard.purgeDelay + 1)
            #expect(try await PurgeWorker(store: setup.services.eventStore, clock: setup.db.clock).runOnce() == 1)
            try await setup.dispatcher.runOnce()
            #expect(setup.fake.revocations.map(\.token) == tokens)
            #expect(setup.fake.refusals.isEmpty)
        }
    }

    @Test(
        "a provider sign-in that stops at the second factor keeps its refresh token with the challenge: stored when it is passed, revoked when it never is"
    )
    func tokenAtSecondFactor() async throws {
        try await withProviderTokenApp { client, setup in
            let providers = setup.providers
            let access = try #require(
                try await call(client, .post, "/auth/google", ["id_token": try await providers.googleToken("g-mfa")]).string(
                    "access_token"))
            let twoFactor = TwoFactorEndpointTests()
            let grant = try await providers.grant(client, "google", "g-mfa", token: access)
            let secret = try await twoFactor.enrol(client, setup.db, token: access, grant: grant).secret
            func signIn() async throws -> String {
                let answer = try await call(
                    client, .post, "/auth/google",
                    ["id_token": try await providers.googleToken("g-mfa"), "authorization_code": setup.fake.code(for: "g-mfa")])
                #expect(answer.status == .ok && answer.body["mfa_required"] as? Bool == true)
                return try #require(answer.string("mfa_token"))
            }
            func parked() async throws -> Int64? {
                try await setup.db.client.query(
                    "SELECT count(*) FROM outbox WHERE channel = 'provider' AND delivered_at IS NULL AND next_attempt_at > $1",
                    [.timestamp(setup.db.clock.now())])[0].int(0)
            }
            // The challenge abandoned: nothing stored; its parked revocation goes once it has ended.
            _ = try await signIn()
            let abandoned = try #require(setup.fake.issuedTokens.last)
            #expect(try await parked() == 1)
            #expect(try await setup.db.client.rowsHolding(abandoned) == 0)
            #expect(try await setup.dispatcher.runOnce() == 0)
            setup.db.clock.advance(by: Policies.standard.mfaChallengeLifetime + ProviderTokenRevocations.parkingMargin + 1)
            #expect(try await setup.dispatcher.runOnce() == 1)
            #expect(setup.fake.revocations.map(\.token) == [abandoned])
            // The challenge passed: the token is the account's, and its parked revocation is withdrawn.
            let mfaToken = try await signIn()
            let kept = try #require(setup.fake.issuedTokens.last)
            #expect(try await parked() == 1)
            let session = try await call(
                client, .post, "/auth/mfa/verify", ["mfa_token": mfaToken, "code": try twoFactor.code(secret, setup.db)])
            #expect(session.status == .ok)
            #expect(try await parked() == 0)
            setup.db.clock.advance(by: Policies.standard.mfaChallengeLifetime + ProviderTokenRevocations.parkingMargin + 1)
            #expect(try await setup.dispatcher.runOnce() == 0)
            #expect(setup.fake.revocations.map(\.token) == [abandoned])
            let stored = try await setup.feed(client).filter { $0.type == "provider.tokens_stored" }
            #expect(stored.count == 1 && stored.first?.data["refresh_token"] == nil)
            #expect(try await setup.db.client.rowsHolding(kept) == 0)
        }
    }

    @Test("a link_required sign-in keeps its refresh token in the link token: revoked when the link is never made, stored when it is")
    func tokenAtLinkRequired() async throws {
        try await withProviderTokenApp { client, setup in
            let providers = setup.providers
            _ = try await signUp(client, email: "ana@example.com")
            func required() async throws -> String {
                let answer = try await call(
                    client, .post, "/auth/google",
                    [
                        "id_token": try await providers.googleToken("g-ana", email: "ana@example.com", verified: true),
                        "authorization_code": setup.fake.code(for: "g-ana"),
                    ])
                #expect(answer.status == .conflict && answer.string("error") == "link_required")
                return try #require(answer.string("link_token"))
            }
            // A link never made: its token is revoked once the link token has expired.
            _ = try await required()
            let unused = try #require(setup.fake.issuedTokens.last)
            try await setup.dispatcher.runOnce()  // the sign-up's email
            setup.db.clock.advance(by: Policies.standard.providerLinkLifetime + ProviderTokenRevocations.parkingMargin + 1)
            #expect(try await setup.dispatcher.runOnce() == 1)
            #expect(setup.fake.revocations.map(\.token) == [unused])
            // Two more, the second linked: the token kept withdraws every revocation parked for its
            // grant (revoking the first would end the person's whole consent, the kept token's too).
            _ = try await required()
            let linkToken = try await required()
            #expect(setup.fake.issuedTokens.count == 3)
            let proven = try await call(
                client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91", "link_token": linkToken])
            #expect(proven.status == .ok)
            try await setup.dispatcher.runOnce()  // the sign-in's email
            setup.db.clock.advance(by: Policies.standard.providerLinkLifetime + ProviderTokenRevocations.parkingMargin + 1)
            #expect(try await setup.dispatcher.runOnce() == 0)
            #expect(setup.fake.revocations.map(\.token) == [unused])
            #expect(try await setup.feed(client).filter { $0.type == "provider.tokens_stored" }.count == 1)
        }
    }

    @Test("the refresh token a link_required sign-in carried, kept once the identity is linked, is held in no table in the clear")
    func linkedTokenSealed() async throws {
        try await withProviderTokenApp { client, setup in
            _ = try await signUp(client, email: "dana@example.org")
            let refused = try await call(
                client, .post, "/auth/apple",
                [
                    "id_token": try await setup.providers.appleToken("a-dana", email: "dana@example.org", verified: true),
                    "authorization_code": setup.fake.code(for: "a-dana"),
                ])
            let linkToken = try #require(refused.string("link_token"))
            let login = try await call(
                client, .post, "/auth/email/login", ["email": "dana@example.org", "password": "violet-harbor-91", "link_token": linkToken])
            #expect(login.status == .ok)
            #expect(try await setup.db.client.rowsHolding(try #require(setup.fake.issuedTokens.first)) == 0)
        }
    }
}
