import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import Testing

/// The code exchanges, on memory. The revocations go through the outbox, which the delivery
/// dispatcher claims from PostgreSQL: those tests, and where the tokens are kept, are in
/// `AtRestTests.swift` ("Provider tokens").
@Suite("HTTP: provider tokens (authorization codes and revocation)", .timeLimit(.minutes(10)))
struct ProviderTokenEndpointTests {
    typealias Providers = ProviderEndpointTests.Providers<MemoryBackend>

    struct Setup {
        let providers: Providers
        let fake: FakeProviderServer
        var db: MemoryBackend { providers.db }
    }

    /// The configuration that exchanges codes and revokes tokens at `fake`'s Apple and Google.
    static func tokenEndpoints(of fake: FakeProviderServer, _ configuration: inout LedgerConfiguration) {
        configuration.appleTokenURL = fake.baseURL + "/apple/token"
        configuration.appleRevokeURL = fake.baseURL + "/apple/revoke"
        configuration.appleTeamID = FakeProviderServer.teamID
        configuration.appleKeyID = FakeProviderServer.keyID
        configuration.applePrivateKeyPath = fake.appleKeyPath
        configuration.googleTokenURL = fake.baseURL + "/google/token"
        configuration.googleRevokeURL = fake.baseURL + "/google/revoke"
        configuration.googleClientSecret = FakeProviderServer.googleSecret
    }

    func withApp(
        live: Bool = false, configure: @escaping @Sendable (inout LedgerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, Setup) async throws -> Void
    ) async throws {
        try await MemoryBackend.with { db in
            let providers = try await Providers.make(db)
            let fake = try FakeProviderServer(clock: db.clock)
            try await fake.serve {
                let services = try db.dependencies {
                    providers.trust(&$0)
                    Self.tokenEndpoints(of: fake, &$0)
                    configure(&$0)
                }
                try await Application(router: buildRouter(services)).test(live ? .live : .router) { client in
                    try await body(client, Setup(providers: providers, fake: fake))
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
            _ = try #require(setup.fake.issuedTokens.first)
            #expect(try await setup.db.storedEventCount(type: "provider.tokens_stored") == 1)
            // What the feed shows of it, and that no table holds the token in the clear: AtRestTests.appleTokenSealed.
            // The next sign-in without a code changes nothing about the token; one with a code
            // does not call Apple again while the account keeps a token for this app.
            #expect(try await call(client, .post, "/auth/apple", ["id_token": idToken]).status == .ok)
            let unused = setup.fake.code(for: "001.ana")
            #expect(try await call(client, .post, "/auth/apple", ["id_token": idToken, "authorization_code": unused]).status == .ok)
            #expect(setup.fake.issuedTokens.count == 1)
            #expect(try await setup.db.storedEventCount(type: "provider.tokens_stored") == 1)
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
            #expect(try await setup.db.storedEventCount(type: "provider.tokens_stored") == 0)
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
            #expect(try await setup.db.storedEventCount(type: "provider.tokens_stored") == 0)
            let login = try await call(
                client, .post, "/auth/email/login", ["email": "dana@example.org", "password": "violet-harbor-91", "link_token": linkToken])
            #expect(login.status == .ok)
            let linked = try await setup.db.storedEventCount(type: "provider.linked")
            let stored = try await setup.db.storedEventCount(type: "provider.tokens_stored")
            #expect(linked > 0 && stored == 1)
            // That no table holds the token in the clear: AtRestTests.linkedTokenSealed.
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
