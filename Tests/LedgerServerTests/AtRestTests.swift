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
