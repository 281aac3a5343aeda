import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerDelivery
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import LedgerWorkers
import Testing

@Suite("HTTP: provider tokens (authorization codes and revocation)", .timeLimit(.minutes(10)))
struct ProviderTokenEndpointTests {
    typealias Providers = ProviderEndpointTests.Providers<TestDatabase>

    /// Emails and texts are accepted and forgotten: these tests follow the revocations.
    struct AcceptingSink: DeliverySink {
        func deliver(_ message: OutboxMessage) async throws {}
    }

    struct Setup {
        let providers: Providers
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

    func withApp(
        live: Bool = false, configure: @escaping @Sendable (inout LedgerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, Setup) async throws -> Void
    ) async throws {
        try await TestPostgres.withDatabase { db in
            let providers = try await Providers.make(db)
            let fake = try FakeProviderServer(clock: db.clock)
            try await fake.serve {
                let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                    providers.trust(&$0)
                    $0.appleTokenURL = fake.baseURL + "/apple/token"
                    $0.appleRevokeURL = fake.baseURL + "/apple/revoke"
                    $0.appleTeamID = FakeProviderServer.teamID
                    $0.appleKeyID = FakeProviderServer.keyID
                    $0.applePrivateKeyPath = fake.appleKeyPath
                    $0.googleTokenURL = fake.baseURL + "/google/token"
                    $0.googleRevokeURL = fake.baseURL + "/google/revoke"
                    $0.googleClientSecret = FakeProviderServer.googleSecret
                    configure(&$0)
                }
                let dispatcher = DeliveryDispatcher(
                    client: db.client, sink: AcceptingSink(),
                    revocations: ProviderRevocationSink(revocations: services.revocations, client: services.providerTokens),
                    clock: db.clock)
                try await Application(router: buildRouter(services)).test(live ? .live : .router) { client in
                    try await body(
                        client,
                        Setup(
                            providers: providers, fake: fake, services: services,
                            dispatcher: dispatcher))
                }
            }
        }
    }

    @Test(
        "an Apple sign-in with a code exchanges it with an ES256 client secret and keeps the refresh token sealed: the feed shows provider.tokens_stored without it, no table holds it in the clear"
    )
    func appleCodeKept() async throws {
        try await withApp { client, setup in
            let idToken = try await setup.providers.appleToken("001.ana", email: "ana@example.com", verified: true)
            let created = try await call(
                client, .post, "/auth/apple", ["id_token": idToken, "authorization_code": setup.fake.code(for: "001.ana")])
            #expect(created.status == .created)
            #expect(setup.fake.refusals.isEmpty)
            let refreshToken = try #require(setup.fake.issuedTokens.first)
            let stored = try await setup.feed(client).filter { $0.type == "provider.tokens_stored" }
            #expect(stored.count == 1)
            #expect(stored.first?.data["provider"] as? String == "apple" && stored.first?.data["client_id"] as? String == "fit.321.ios")
            #expect(stored.first?.data["subject"] as? String == "001.ana" && stored.first?.data["refresh_token"] == nil)
            #expect(try await setup.db.client.rowsHolding(refreshToken) == 0)
            // The next sign-in without a code changes nothing about the token; one with a code
            // does not call Apple again while the account keeps a token for this app.
            #expect(try await call(client, .post, "/auth/apple", ["id_token": idToken]).status == .ok)
            let unused = setup.fake.code(for: "001.ana")
            #expect(try await call(client, .post, "/auth/apple", ["id_token": idToken, "authorization_code": unused]).status == .ok)
            #expect(setup.fake.issuedTokens.count == 1)
            #expect(try await setup.feed(client).filter { $0.type == "provider.tokens_stored" }.count == 1)
        }
    }

    @Test(
        "disconnecting revokes that provider's token and deleting the account revokes the rest, through the outbox: sealed there, retried after a failure, blanked once delivered"
    )
    func revokedOnDisconnectAndDeletion() async throws {
        try await withApp { client, setup in
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
        try await withApp { client, setup in
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
        try await withApp { client, setup in
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

    @Test("exchanges are counted per client before the call: past the budget a code is not sent, and the sign-in still succeeds")
    func exchangeBudget() async throws {
        let budget: @Sendable (inout LedgerConfiguration) -> Void = {
            $0.policies.ipSignupLimit = 2
            $0.trustedProxies = ["127.0.0.1/32", "::1/128"]
        }
        try await withApp(live: true, configure: budget) { client, setup in
            for index in 0..<3 {
                let subject = "g-budget-\(index)"
                let answer = try await call(
                    client, .post, "/auth/google",
                    ["id_token": try await setup.providers.googleToken(subject), "authorization_code": setup.fake.code(for: subject)],
                    from: "203.0.113.9")
                #expect(answer.status == .created)
            }
            #expect(setup.fake.issuedTokens.count == 2)
        }
    }

    @Test("a code the provider refuses, or one whose answer names another user, still signs in and keeps nothing")
    func refusedCodes() async throws {
        try await withApp { client, setup in
            let first = try await call(
                client, .post, "/auth/google",
                ["id_token": try await setup.providers.googleToken("g-7"), "authorization_code": "c.never-issued"])
            #expect(first.status == .created)
            #expect(setup.fake.refusals == ["unknown or used code"])
            setup.fake.answer(withSubject: "g-someone-else")
            let second = try await call(
                client, .post, "/auth/google",
                ["id_token": try await setup.providers.googleToken("g-7"), "authorization_code": setup.fake.code(for: "g-7")])
            #expect(second.status == .ok)
            #expect(setup.fake.issuedTokens.count == 1)
            #expect(try await setup.feed(client).filter { $0.type == "provider.tokens_stored" }.isEmpty)
        }
    }

    @Test("with a wrong Google client secret the provider refuses the exchange; without credentials a code is not even sent")
    func credentials() async throws {
        let wrongSecret: @Sendable (inout LedgerConfiguration) -> Void = { $0.googleClientSecret = "not-the-secret" }
        try await withApp(configure: wrongSecret) { client, setup in
            let answer = try await call(
                client, .post, "/auth/google",
                ["id_token": try await setup.providers.googleToken("g-8"), "authorization_code": setup.fake.code(for: "g-8")])
            #expect(answer.status == .created)
            #expect(setup.fake.refusals == ["wrong Google client secret"])
        }
        let noSecret: @Sendable (inout LedgerConfiguration) -> Void = { $0.googleClientSecret = nil }
        try await withApp(configure: noSecret) { client, setup in
            let answer = try await call(
                client, .post, "/auth/google",
                ["id_token": try await setup.providers.googleToken("g-9"), "authorization_code": setup.fake.code(for: "g-9")])
            #expect(answer.status == .created)
            #expect(setup.fake.refusals.isEmpty && setup.fake.issuedTokens.isEmpty)
        }
    }

    @Test("link_required carries the fetched token in its link token; the sign-in that links the identity keeps it")
    func linkRequiredCarriesToken() async throws {
        try await withApp { client, setup in
            _ = try await signUp(client, email: "dana@example.org")
            let refused = try await call(
                client, .post, "/auth/apple",
                [
                    "id_token": try await setup.providers.appleToken("a-dana", email: "dana@example.org", verified: true),
                    "authorization_code": setup.fake.code(for: "a-dana"),
                ])
            #expect(refused.status == .conflict)
            let linkToken = try #require(refused.string("link_token"))
            #expect(try await setup.feed(client).filter { $0.type == "provider.tokens_stored" }.isEmpty)
            let login = try await call(
                client, .post, "/auth/email/login", ["email": "dana@example.org", "password": "violet-harbor-91", "link_token": linkToken])
            #expect(login.status == .ok)
            let types = try await setup.feed(client).map(\.type)
            #expect(types.contains("provider.linked") && types.filter { $0 == "provider.tokens_stored" }.count == 1)
            #expect(try await setup.db.client.rowsHolding(try #require(setup.fake.issuedTokens.first)) == 0)
        }
    }

    @Test("Apple credentials go together, and a key file that cannot be read or is no P-256 key stops the start")
    func appleConfiguration() throws {
        #expect(throws: ConfigurationError.self) {
            try LedgerConfiguration.fromEnvironment(["LEDGER_APPLE_TEAM_ID": "T", "LEDGER_APPLE_KEY_ID": "K"])
        }
        #expect(throws: ConfigurationError.self) {
            try LedgerConfiguration.fromEnvironment(["LEDGER_APPLE_TOKEN_URL": "ftp://example.com/token"])
        }
        var configuration = try LedgerConfiguration.fromEnvironment([
            "LEDGER_APPLE_TEAM_ID": "T", "LEDGER_APPLE_KEY_ID": "K", "LEDGER_APPLE_PRIVATE_KEY": "/nonexistent/key.p8",
        ])
        #expect(throws: ConfigurationError.self) { try configuration.providerTokenClient(clock: ManualClock()) }
        let garbage = FileManager.default.temporaryDirectory.appendingPathComponent("garbage-\(UUID().uuidString).p8").path
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: garbage))
        configuration.applePrivateKeyPath = garbage
        #expect(throws: ConfigurationError.self) { try configuration.providerTokenClient(clock: ManualClock()) }
        // Sign in with Apple without its key works, and says at start what it cannot do.
        let unkeyed = try LedgerConfiguration.fromEnvironment(["LEDGER_APPLE_CLIENT_IDS": "fit.321.ios"])
        #expect(unkeyed.warnings.contains { $0.contains("LEDGER_APPLE_PRIVATE_KEY is not set") })
    }
}
