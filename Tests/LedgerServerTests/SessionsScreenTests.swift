import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerCore
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import Testing

@Suite("HTTP: the sessions screen and new sign-in alerts", .timeLimit(.minutes(10)))
struct SessionsScreenTests {
    static let chrome =
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"

    /// Signs in with the given device headers; the access token.
    func logIn(_ client: some TestClientProtocol, _ email: String, userAgent: String? = nil, deviceName: String? = nil) async throws
        -> String
    {
        try await signIn(client, email, userAgent: userAgent, deviceName: deviceName).access
    }

    /// Signs in with the given device headers; the access token and the device token.
    func signIn(
        _ client: some TestClientProtocol, _ email: String, userAgent: String? = nil, deviceName: String? = nil, deviceToken: String? = nil
    ) async throws -> (access: String, device: String, refresh: String) {
        var headers = jsonHeaders
        if let userAgent { headers[.userAgent] = userAgent }
        if let deviceName { headers[HTTPField.Name("X-Device-Name")!] = deviceName }
        if let deviceToken { headers[HTTPField.Name("X-Device-Token")!] = deviceToken }
        return try await client.execute(
            uri: "/auth/email/login", method: .post, headers: headers, body: jsonBody(["email": email, "password": "violet-harbor-91"])
        ) { response in
            let body = try json(response)
            return (body["access_token"] as? String ?? "", body["device_token"] as? String ?? "", body["refresh_token"] as? String ?? "")
        }
    }

    func sessions(_ client: some TestClientProtocol, _ access: String) async throws -> [[String: Any]] {
        try await call(client, .get, "/me/sessions", token: access).body["sessions"] as? [[String: Any]] ?? []
    }

    @Test("only live sessions are listed, most recent use first, with readable devices; last_used_at moves on use")
    func liveSessions() async throws {
        try await MemoryBackend.with { db in
            let services = try db.dependencies()
            try await Application(router: buildRouter(services)).test(.router) { client in
                let first = try await signUp(client, email: "ana@example.com")
                db.clock.advance(by: 29 * 86_400)
                let second = try await logIn(client, "ana@example.com", userAgent: Self.chrome)
                let third = try await logIn(client, "ana@example.com", deviceName: "Ana's iPad")
                var list = try await sessions(client, second)
                #expect(list.count == 3)
                #expect(Set(list.compactMap { $0["device"] as? String }) == ["Mac · Chrome 120", "Ana's iPad"])
                // Revoked ones go, and so do the ones whose refresh token has expired.
                let thirdID = try #require(list.first { $0["device"] as? String == "Ana's iPad" }?["id"] as? String)
                #expect(
                    try await call(client, .delete, "/me/sessions/\(thirdID)", token: second, path: "/me/sessions/{id}").status
                        == .noContent)
                db.clock.advance(by: 2 * 86_400)
                _ = first
                let fresh = try await logIn(client, "ana@example.com", userAgent: Self.chrome)
                list = try await sessions(client, fresh)
                #expect(list.count == 2 && !list.contains { $0["id"] as? String == thirdID })
                // Use moves last_used_at (written beside the request, at most once a minute).
                let before = try #require(list.first { $0["current"] as? Bool == true }?["last_used_at"] as? String)
                db.clock.advance(by: 120)
                _ = try await sessions(client, fresh)
                await services.account.accounts.activity.settle()
                list = try await sessions(client, fresh)
                let after = try #require(list.first { $0["current"] as? Bool == true }?["last_used_at"] as? String)
                #expect(after == RFC3339.format(db.clock.now()) && after != before)
                #expect(list.first?["current"] as? Bool == true)
                // Any signed-in call is a use, GET /me (read in one query) too; read beside the API,
                // which would count as a use of its own.
                db.clock.advance(by: 120)
                let me = try await call(client, .get, "/me", token: fresh)
                await services.account.accounts.activity.settle()
                #expect(me.string("account_id") != nil)
                let listed = try await services.account.accounts.liveSessions(accessToken: fresh)
                #expect(listed?.sessions.first?.lastUsedAt == db.clock.now())
                _ = third
            }
        }
    }

    @Test("sign out all other devices: every other session ends, this one stays")
    func signOutOthers() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let first = try await signUp(client, email: "bo@example.com")
                let second = try await logIn(client, "bo@example.com")
                let third = try await logIn(client, "bo@example.com")
                #expect(try await call(client, .delete, "/me/sessions", token: second).status == .badRequest)
                #expect(try await call(client, .delete, "/me/sessions?others=true", token: second).status == .noContent)
                #expect(try await call(client, .get, "/me", token: first).status == .unauthorized)
                #expect(try await call(client, .get, "/me", token: third).status == .unauthorized)
                #expect(try await sessions(client, second).count == 1)
            }
        }
    }

    @Test(
        "new_sign_in is decided by the device token alone: a known token under any label is quiet; a copied label or a foreign token is new"
    )
    func newSignInAlert() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "cy@example.com")
                func alerts() async throws -> [[String: String]] {
                    try await db.queuedMessages(template: "new_sign_in").compactMap(\.details)
                }
                let laptop = try await signIn(client, "cy@example.com", userAgent: Self.chrome)
                #expect(try await alerts().isEmpty)  // the address is not verified yet: nobody to tell
                _ = try await emailLinkGrant(client, db, token: access)
                // The laptop signs in again with its device token, under any label: no alert.
                let again = try await signIn(client, "cy@example.com", userAgent: "Firefox", deviceToken: laptop.device)
                #expect(again.device == laptop.device)
                #expect(try await alerts().isEmpty)
                // A phone without a token is a new device: told once; with its token, known.
                let phone = try await signIn(client, "cy@example.com", userAgent: "321Fit/4.2 (iPhone; iOS 17.1; Scale/3.00)")
                _ = try await signIn(
                    client, "cy@example.com", userAgent: "321Fit/4.3 (iPhone; iOS 17.2; Scale/3.00)", deviceToken: phone.device)
                var sent = try await alerts()
                #expect(sent.count == 1)
                let details = try #require(sent.first)
                #expect(details["device"] == "iPhone · 321Fit 4.2" && details["signed_in_at"] == RFC3339.format(db.clock.now()))
                #expect(details["secure_account"]?.contains("change your password") == true)
                // Whoever copies the app's usual User-Agent, or brings another account's token, is still a new device.
                _ = try await signIn(client, "cy@example.com", userAgent: Self.chrome)
                _ = try await signUp(client, email: "dee@example.com")
                let othersDevice = try await signIn(client, "dee@example.com").device
                _ = try await signIn(client, "cy@example.com", userAgent: Self.chrome, deviceToken: othersDevice)
                _ = try await signIn(client, "cy@example.com", userAgent: Self.chrome, deviceToken: "dv_made-up")
                sent = try await alerts()
                #expect(sent.count == 4)
                // A refresh answers the session's device token.
                let refreshed = try await call(client, .post, "/auth/token/refresh", ["refresh_token": phone.refresh])
                #expect(refreshed.status == .ok && refreshed.string("device_token") == phone.device)
            }
        }
    }
}
