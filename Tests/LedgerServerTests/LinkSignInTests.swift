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

/// API.md "links that sign in": a link that proves an address also signs in the device that
/// opened it, or asks for its second factor.
@Suite("HTTP: links that sign in", .timeLimit(.minutes(10)))
struct LinkSignInTests {
    typealias TwoFactor = TwoFactorEndpointTests

    /// A new email account (`ana@example.com`): the app's client, the backend, the sign-up's
    /// access token and the verification link's token.
    func withSignedUp(_ body: @escaping @Sendable (any TestClientProtocol, MemoryBackend, String, String) async throws -> Void)
        async throws
    {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                try await body(
                    client, db, try await signUp(client, email: "ana@example.com"), try await outboxToken(db, template: "verify_email"))
            }
        }
    }

    /// The link of an email change to `ana.new@example.com`, asked for with a password grant.
    func changeLink(_ client: some TestClientProtocol, _ db: some TestBackend, _ access: String) async throws -> String {
        let grant = try #require(
            try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access).string("reauth_token"))
        let asked = try await call(
            client, .post, "/auth/email/request-change", ["new_email": "ana.new@example.com"], token: access, reauth: grant)
        #expect(asked.status == .accepted)
        return try #require(try await outboxMessage(db, template: "email_change_confirm").token)
    }

    /// The live sessions of the account behind `access`.
    func sessionCount(_ client: some TestClientProtocol, _ access: String) async throws -> Int {
        (try await call(client, .get, "/me/sessions", token: access).body["sessions"] as? [Any])?.count ?? -1
    }

    @Test("a verification link answers a session of its own, once: the method is email_link, a replay is 410")
    func verificationSignsIn() async throws {
        try await withSignedUp { client, db, first, token in
            let answer = try await call(
                client, .post, "/auth/email/verify", ["token": token], headers: [.init("X-Device-Name")!: "Ana's iPad"])
            #expect(answer.status == .ok && answer.body["email_verified"] as? Bool == true)
            let session = try #require(answer.body["session"] as? [String: Any])
            let access = try #require(session["access_token"] as? String)
            #expect(session["email_verified"] as? Bool == true && session["refresh_token"] is String)
            #expect(answer.body["mfa_required"] == nil)
            // The link's session is a session like any other, beside the sign-up's.
            let me = try await call(client, .get, "/me", token: access)
            #expect(me.status == .ok && me.string("email") == "ana@example.com")
            #expect(try await sessionCount(client, first) == 2)
            let accountID = try #require((session["account_id"] as? String).flatMap(UUID.init(uuidString:)))
            let sessionID = try #require((session["session_id"] as? String).flatMap(UUID.init(uuidString:)))
            let started = try await db.state(of: accountID).sessions[sessionID]
            #expect(started?.method == "email_link" && started?.device == "Ana's iPad")
            // Spent: a second device (or a scanner replaying the POST) gets nothing.
            let replay = try await call(client, .post, "/auth/email/verify", ["token": token])
            #expect(replay.status == .gone && replay.string("error") == "link_expired" && replay.body["session"] == nil)
            #expect(try await sessionCount(client, first) == 2)
        }
    }

    @Test("two devices posting one link at once: exactly one is verified and signed in")
    func oneLinkOneSession() async throws {
        try await withSignedUp { client, db, first, token in
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<6 { group.addTask { try await call(client, .post, "/auth/email/verify", ["token": token]) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == .ok && $0.body["session"] != nil }.count == 1)
            #expect(answers.filter { $0.status == .gone }.count == 5)
            #expect(try await sessionCount(client, first) == 2)
        }
    }

    @Test("the link page's form proves the address and signs nobody in: the page is the service's, not the app's")
    func pageSignsNobodyIn() async throws {
        try await withSignedUp { client, db, first, token in
            let done = try await client.execute(
                uri: "/verify-email", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token=\(token)")
            ) { $0 }
            #expect(done.status == .ok && !String(buffer: done.body).contains("access_token"))
            #expect(try await call(client, .get, "/me", token: first).body["email_verified"] as? Bool == true)
            #expect(try await sessionCount(client, first) == 1)
        }
    }

    @Test("with two-factor on, an email change's link answers mfa_required, not a session; the code then starts it")
    func secondFactor() async throws {
        try await TwoFactor().withApp { client, providers in
            let db = providers.db
            let (access, secret) = try await TwoFactor().signUpWithTOTP(client, db, email: "ana@example.com")
            let token = try await changeLink(client, db, access)
            let before = try await sessionCount(client, access)
            let answer = try await call(client, .post, "/auth/email/confirm-change", ["token": token])
            #expect(answer.string("email") == "ana.new@example.com" && answer.body["session"] == nil)
            let mfa = try TwoFactor().mfaToken(answer)
            #expect(try await sessionCount(client, access) == before)
            let passed = try await TwoFactor().verify(client, mfa, code: try TwoFactor().code(secret, db, steps: 1))
            #expect(passed.status == .ok && passed.string("access_token") != nil)
            #expect(try await sessionCount(client, access) == before + 1)
        }
    }

    @Test("an email change's link signs in at the new address, and the old address keeps its revert link")
    func changeSignsIn() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let token = try await changeLink(client, db, access)
                let hub = try await call(client, .post, "/auth/email/confirm-change", ["token": token])
                #expect(hub.status == .ok && hub.string("email") == "ana.new@example.com")
                let session = try #require(hub.body["session"] as? [String: Any])
                let fresh = try #require(session["access_token"] as? String)
                #expect(try await call(client, .get, "/me", token: fresh).string("email") == "ana.new@example.com")
                #expect(try await outboxMessage(db, template: "email_changed_notice").to == "ana@example.com")
            }
        }
    }
}
