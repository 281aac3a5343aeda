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

/// docs/accounts.md "Links that sign in": a link that proves an address also signs in the device that
/// opened it, or asks for its second factor.
@Suite("HTTP: links that sign in", .timeLimit(.minutes(10)))
struct LinkSignInTests {
    typealias TwoFactor = TwoFactorEndpointTests

    /// A new email account (`ana@example.com`) signed up through the API: its access token and
    /// the `device_token` of the device it signed up on.
    func signUpDevice(_ client: some TestClientProtocol) async throws -> (access: String, device: String) {
        let answer = try await call(client, .post, "/auth/email/signup", ["email": "ana@example.com", "password": "violet-harbor-91"])
        #expect(answer.status == .created)
        return (try #require(answer.string("access_token")), try #require(answer.string("device_token")))
    }

    /// The headers of the device that signed up: its token, and its name.
    func onDevice(_ device: String) -> HTTPFields { [.init("X-Device-Token")!: device, .init("X-Device-Name")!: "Ana's iPad"] }

    /// A new email account (`ana@example.com`): the app's client, the backend, the sign-up's
    /// access token, its device token and the verification link's token.
    func withSignedUp(
        _ body:
            @escaping @Sendable (any TestClientProtocol, MemoryBackend, _ access: String, _ device: String, _ link: String) async throws
            -> Void
    ) async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let (access, device) = try await signUpDevice(client)
                try await body(client, db, access, device, try await outboxToken(db, template: "verify_email"))
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
        try await withSignedUp { client, db, first, device, token in
            let answer = try await call(
                client, .post, "/auth/email/verify", ["token": token], headers: onDevice(device))
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

    @Test(
        "a device the account never signed in on proves the address and gets no session: someone who signed up with another's address keeps no way in through the owner's click"
    )
    func unknownDeviceGetsNoSession() async throws {
        try await withSignedUp { client, db, first, device, token in
            // The owner of the address opens the squatter's verification link on their own phone.
            let answer = try await call(
                client, .post, "/auth/email/verify", ["token": token], headers: [.init("X-Device-Name")!: "Owner's phone"])
            #expect(answer.status == .ok && answer.body["email_verified"] as? Bool == true)
            #expect(answer.body["session"] == nil && answer.body["mfa_token"] == nil)
            #expect(try await sessionCount(client, first) == 1)
            // A token of another account's device is no better.
            _ = device
        }
    }

    @Test("two devices posting one link at once: exactly one is verified and signed in")
    func oneLinkOneSession() async throws {
        try await withSignedUp { client, db, first, device, token in
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await call(client, .post, "/auth/email/verify", ["token": token], headers: onDevice(device)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.filter { $0.status == .ok && $0.body["session"] != nil }.count == 1)
            #expect(answers.filter { $0.status == .gone }.count == 5)
            #expect(try await sessionCount(client, first) == 2)
        }
    }

    @Test("the link page's form proves the address and signs nobody in: the page is the service's, not the app's")
    func pageSignsNobodyIn() async throws {
        try await withSignedUp { client, db, first, device, token in
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
            let (access, device) = try await signUpDevice(client)
            let secret = try await TwoFactor().enrol(client, db, token: access, grant: try await emailLinkGrant(client, db, token: access))
                .secret
            let token = try await changeLink(client, db, access)
            let before = try await sessionCount(client, access)
            let answer = try await call(client, .post, "/auth/email/confirm-change", ["token": token], headers: onDevice(device))
            #expect(answer.string("email") == "ana.new@example.com" && answer.body["session"] == nil)
            let mfa = try TwoFactor().mfaToken(answer)
            #expect(try await sessionCount(client, access) == before)
            let passed = try await TwoFactor().verify(client, mfa, code: try TwoFactor().code(secret, db, steps: 1))
            #expect(passed.status == .ok && passed.string("access_token") != nil)
            #expect(try await sessionCount(client, access) == before + 1)
        }
    }

    @Test("an email change's link, opened on the account's device, signs it in at the new address")
    func changeSignsIn() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let (access, device) = try await signUpDevice(client)
                let token = try await changeLink(client, db, access)
                // A stranger at the new address (a mistyped one) would get no session: only the account's device does.
                let hub = try await call(client, .post, "/auth/email/confirm-change", ["token": token], headers: onDevice(device))
                #expect(hub.status == .ok && hub.string("email") == "ana.new@example.com")
                let session = try #require(hub.body["session"] as? [String: Any])
                let fresh = try #require(session["access_token"] as? String)
                #expect(try await call(client, .get, "/me", token: fresh).string("email") == "ana.new@example.com")
            }
        }
    }
}
