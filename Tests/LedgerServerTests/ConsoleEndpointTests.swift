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
import LedgerWebAuthnTesting
import NIOCore
import Testing

/// The support console (docs/support.md "The console"): invitation, passkey sign-in, the cookie,
/// search, an account page, a change with its reason, and what refuses a change: no form
/// token, another session's, another origin, a support role for an admin change, an admin
/// change without the passkey again, a removed staff member.
@Suite("HTTP: the support console", .timeLimit(.minutes(10)))
struct ConsoleEndpointTests {
    static let origin = "https://support.321.fit"
    static let configure: @Sendable (inout LedgerConfiguration) -> Void = { $0.consoleOriginSetting = origin }

    /// The app with the console on `origin`, and the console's service (to invite, as `ledger staff add` does).
    func withConsole(_ body: @escaping @Sendable (any TestClientProtocol, MemoryBackend, StaffConsole) async throws -> Void) async throws {
        try await MemoryBackend.with { db in
            let services = try db.dependencies(configure: Self.configure)
            let console = try #require(services.account.console)
            try await Application(router: buildRouter(services)).test(.router) { client in try await body(client, db, console) }
        }
    }

    /// A console request: the console's `Origin` unless told otherwise, the session cookie when given.
    func request(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, json: [String: Any]? = nil,
        form: [String: String]? = nil, cookie: String? = nil, origin: String? = ConsoleEndpointTests.origin, path: String? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, text: String) {
        var headers = extra
        if let origin { headers[.origin] = origin }
        if let cookie { headers[.cookie] = "\(ConsoleController.cookieName)=\(cookie)" }
        var body: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            body = jsonBody(json)
        }
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            let encoded = form.map { key, value in
                "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
            }.joined(separator: "&")
            body = ByteBuffer(string: encoded)
        }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body) { response in
            expectConforms(response, method.rawValue.lowercased(), path ?? String(uri.prefix { $0 != "?" }))
            return (response.status, response.headers, String(buffer: response.body))
        }
    }

    /// Invites `email`, registers a passkey through the invitation page's calls: its credential.
    func enrol(
        _ client: some TestClientProtocol, _ db: MemoryBackend, _ console: StaffConsole, _ authenticator: SoftAuthenticator,
        email: String = "nino@321.fit", role: StaffRole = .admin
    ) async throws -> SoftCredential {
        _ = try await console.invite(email: email, role: role)
        let token = try #require(await db.staff.outbox.last?.token)
        let page = try await request(client, .get, "/console/invitation?token=\(token)", origin: nil)
        #expect(page.status == .ok && page.text.contains("Create passkey") && page.text.contains(email))
        #expect(
            page.headers[HTTPField.Name("Content-Security-Policy")!]
                == "default-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
        #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin")
        #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY" && page.headers[.cacheControl] == "no-store")
        #expect(!page.text.contains("<script>"), "no inline script")
        let options = try await call(client, .post, "/console/invitation/options", ["token": token], headers: [.origin: Self.origin])
        #expect((options.body["rp"] as? [String: Any])?["id"] as? String == "support.321.fit")
        let made = authenticator.makeCredential(
            rpID: "support.321.fit", origin: Self.origin, challenge: try PasskeyEndpointTests.challenge(options),
            userHandle: try PasskeyEndpointTests.userHandle(options))
        let registered = try await call(
            client, .post, "/console/invitation",
            ["token": token, "credential": try PasskeyEndpointTests.object(made.response.jsonBytes())],
            headers: [.origin: Self.origin])
        #expect(registered.status == .ok && registered.string("redirect") == "/console/sign-in")
        return made.credential
    }

    /// Signs in with the passkey: the cookie's value, checked for its attributes.
    func signIn(_ client: some TestClientProtocol, _ authenticator: SoftAuthenticator, _ credential: SoftCredential) async throws -> String
    {
        let options = try await call(client, .post, "/console/sign-in/options", headers: [.origin: Self.origin])
        let assertion = authenticator.getAssertion(credential: credential, challenge: try PasskeyEndpointTests.challenge(options))
        let answer = try await call(
            client, .post, "/console/sign-in", ["credential": try PasskeyEndpointTests.object(assertion.jsonBytes())],
            headers: [.origin: Self.origin])
        #expect(answer.status == .ok && answer.string("redirect") == "/console")
        let cookie = try #require(answer.headers[.setCookie])
        #expect(cookie.hasPrefix(ConsoleController.cookieName + "="))
        for attribute in ["Path=/", "Max-Age=28800", "Secure", "HttpOnly", "SameSite=Strict"] {
            #expect(cookie.contains("; \(attribute)"), "\(attribute)")
        }
        #expect(!cookie.contains("Domain="), "__Host-: this host only")
        let value = cookie.dropFirst(ConsoleController.cookieName.count + 1).prefix { $0 != ";" }
        return String(value)
    }

    /// The form token a page holds.
    func csrf(_ page: String) throws -> String {
        let marker = #"name="csrf" value=""#
        let start = try #require(page.range(of: marker)).upperBound
        return String(page[start...].prefix { $0 != "\"" })
    }

    @Test("an invitation registers a passkey; the passkey signs in; the cookie is __Host-, HttpOnly, Secure, Strict, 8 hours")
    func invitationAndSignIn() async throws {
        try await withConsole { client, db, console in
            let unsigned = try await request(client, .get, "/console", origin: nil)
            #expect(unsigned.status == .seeOther && unsigned.headers[.location] == "/console/sign-in")
            let authenticator = SoftAuthenticator()
            let credential = try await enrol(client, db, console, authenticator)
            let cookie = try await signIn(client, authenticator, credential)
            let home = try await request(client, .get, "/console", cookie: cookie, origin: nil)
            #expect(home.status == .ok && home.text.contains("Find an account") && home.text.contains("nino@321.fit"))
            // The invitation is used up.
            let token = try #require(await db.staff.outbox.last?.token)
            #expect(try await request(client, .get, "/console/invitation?token=\(token)", origin: nil).status == .gone)
            db.clock.advance(by: StaffConsole.sessionLifetime)
            #expect(try await request(client, .get, "/console", cookie: cookie, origin: nil).status == .seeOther, "8 hours, no more")
        }
    }

    @Test(
        "search, the account page with its history and chain verdict, and a sign-out everywhere with its reason, recorded with the staff member"
    )
    func searchAndAct() async throws {
        try await withConsole { client, db, console in
            let authenticator = SoftAuthenticator()
            let cookie = try await signIn(client, authenticator, try await enrol(client, db, console, authenticator, role: .support))
            let access = try await signUp(client, email: "ana@example.com")
            let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
            let results = try await request(client, .get, "/console/accounts?by=email&q=ANA%40example.com", cookie: cookie, origin: nil)
            #expect(results.status == .ok && results.text.contains("/console/accounts/\(accountID)"))
            let partial = try await request(client, .get, "/console/accounts?by=email&q=ana%40example.co", cookie: cookie, origin: nil)
            #expect(partial.text.contains("0 found"))
            let account = try await request(
                client, .get, "/console/accounts/\(accountID)", cookie: cookie, origin: nil, path: "/console/accounts/{id}")
            #expect(account.status == .ok && account.text.contains("ana@example.com") && account.text.contains("Sign out everywhere"))
            #expect(!account.text.contains("action-disable"), "a support role sees no admin change")
            let confirm = try await request(
                client, .get, "/console/accounts/\(accountID)/sign-out", cookie: cookie, origin: nil,
                path: "/console/accounts/{id}/{action}")
            #expect(confirm.status == .ok && confirm.text.contains("Reason"))
            let done = try await request(
                client, .post, "/console/accounts/\(accountID)/sign-out",
                form: ["csrf": try csrf(confirm.text), "reason": "ticket 12: lost phone"],
                cookie: cookie, path: "/console/accounts/{id}/{action}")
            #expect(done.status == .seeOther && done.headers[.location] == "/console/accounts/\(accountID)?done=sign-out")
            #expect(try await call(client, .get, "/me", token: access).status == .unauthorized)
            let history = try await db.history(of: try #require(UUID(uuidString: accountID)))
            let record = try #require(history.last { $0.type == "admin.signed_out" })
            let data = try #require(try JSONSerialization.jsonObject(with: Data(record.payload ?? [])) as? [String: Any])
            #expect(data["operator"] as? String == "nino@321.fit" && data["reason"] as? String == "ticket 12: lost phone")
            #expect(data["staff_id"] as? String != nil && data["key_id"] == nil)
            #expect(history.filter { $0.type == "admin.viewed" }.count == 2, "the search and the account page")
        }
    }

    @Test("a change is refused without the session's form token, with another session's, or from another origin; nothing happens")
    func csrfAndOrigin() async throws {
        try await withConsole { client, db, console in
            let authenticator = SoftAuthenticator()
            let credential = try await enrol(client, db, console, authenticator)
            let cookie = try await signIn(client, authenticator, credential)
            let other = try await signIn(client, authenticator, credential)
            let access = try await signUp(client, email: "ana@example.com")
            let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
            let path = "/console/accounts/{id}/{action}"
            let page = try await request(client, .get, "/console/accounts/\(accountID)/sign-out", cookie: cookie, origin: nil, path: path)
            let token = try csrf(page.text)
            let othersPage = try await request(
                client, .get, "/console/accounts/\(accountID)/sign-out", cookie: other, origin: nil, path: path)
            let uri = "/console/accounts/\(accountID)/sign-out"
            let attempts: [(form: [String: String], origin: String?)] = [
                (["reason": "x"], Self.origin),
                (["csrf": "forged", "reason": "x"], Self.origin),
                (["csrf": try csrf(othersPage.text), "reason": "x"], Self.origin),
                (["csrf": token, "reason": "x"], "https://evil.example"),
                (["csrf": token, "reason": "x"], nil),
            ]
            for attempt in attempts {
                let refused = try await request(client, .post, uri, form: attempt.form, cookie: cookie, origin: attempt.origin, path: path)
                #expect(refused.status == .forbidden, "\(attempt.form.keys.sorted()) from \(attempt.origin ?? "nowhere")")
            }
            // No cookie at all: no session.
            let anonymous = try await request(client, .post, uri, form: ["csrf": token, "reason": "x"], path: path)
            #expect(anonymous.status == .unauthorized)
            #expect(try await call(client, .get, "/me", token: access).status == .ok, "nothing happened")
            // The JSON calls too: options to confirm need the header token and the origin.
            let noToken = try await request(client, .post, "/console/confirm/options", cookie: cookie)
            #expect(noToken.status == .forbidden)
            let evil = try await request(
                client, .post, "/console/sign-in/options", origin: "https://support.321.fit.evil.example")
            #expect(evil.status == .forbidden)
        }
    }

    @Test("an admin change asks for the passkey again; a support role cannot make one; an end user's token opens nothing")
    func adminChanges() async throws {
        try await withConsole { client, db, console in
            let authenticator = SoftAuthenticator()
            let adminPasskey = try await enrol(client, db, console, authenticator)
            let adminCookie = try await signIn(client, authenticator, adminPasskey)
            let supportCookie = try await signIn(
                client, authenticator, try await enrol(client, db, console, authenticator, email: "lasha@321.fit", role: .support))
            let access = try await signUp(client, email: "ana@example.com")
            let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
            let path = "/console/accounts/{id}/{action}"
            let uri = "/console/accounts/\(accountID)/disable"
            // A support role: no confirmation page, no change.
            #expect(try await request(client, .get, uri, cookie: supportCookie, origin: nil, path: path).status == .forbidden)
            let supportHome = try await request(client, .get, "/console", cookie: supportCookie, origin: nil)
            let supportForm = ["csrf": try csrf(supportHome.text), "reason": "x"]
            #expect(try await request(client, .post, uri, form: supportForm, cookie: supportCookie, path: path).status == .forbidden)
            // An admin without the passkey again: refused.
            let page = try await request(client, .get, uri, cookie: adminCookie, origin: nil, path: path)
            #expect(page.text.contains("data-ceremony=\"confirm\"") && page.text.contains("/console/assets/console.js"))
            let token = try csrf(page.text)
            let bare = try await request(client, .post, uri, form: ["csrf": token, "reason": "fraud"], cookie: adminCookie, path: path)
            #expect(bare.status == .forbidden)
            // With it: done.
            let options = try await request(
                client, .post, "/console/confirm/options", cookie: adminCookie, headers: [HTTPField.Name("X-CSRF-Token")!: token])
            let challenge = try #require(
                (try JSONSerialization.jsonObject(with: Data(options.text.utf8)) as? [String: Any])?["challenge"] as? String)
            let assertion = authenticator.getAssertion(credential: adminPasskey, challenge: try #require(Base64URL.decode(challenge)))
            let done = try await request(
                client, .post, uri,
                form: ["csrf": token, "reason": "card fraud", "credential": String(decoding: assertion.jsonBytes(), as: UTF8.self)],
                cookie: adminCookie, path: path)
            #expect(done.status == .seeOther)
            #expect(try await call(client, .get, "/me", token: access).status == .unauthorized)
            // An end user's access token is no console session, and a console cookie is no API key.
            #expect(try await request(client, .get, "/console", cookie: access, origin: nil).status == .seeOther)
            var headers = HTTPFields()
            headers[HTTPField.Name("X-Ledger-Operator")!] = "Nino"
            headers[.cookie] = "\(ConsoleController.cookieName)=\(adminCookie)"
            #expect(
                try await call(client, .get, "/admin/accounts/\(accountID)", path: "/admin/accounts/{id}", headers: headers).status
                    == .unauthorized)
        }
    }

    @Test("an admin removes a lost phone from the console: the method in the form, the passkey again, the change recorded")
    func removeMethod() async throws {
        try await withConsole { client, db, console in
            let authenticator = SoftAuthenticator()
            let passkey = try await enrol(client, db, console, authenticator)
            let cookie = try await signIn(client, authenticator, passkey)
            let access = try await accountWithPhone(client, db)
            let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
            let path = "/console/accounts/{id}/{action}"
            let account = try await request(
                client, .get, "/console/accounts/\(accountID)", cookie: cookie, origin: nil, path: "/console/accounts/{id}")
            #expect(account.text.contains("remove-method?method=phone"))
            let page = try await request(
                client, .get, "/console/accounts/\(accountID)/remove-method?method=phone", cookie: cookie, origin: nil, path: path)
            #expect(page.text.contains(#"name="method" value="phone""#))
            let token = try csrf(page.text)
            let options = try await request(
                client, .post, "/console/confirm/options", cookie: cookie, headers: [HTTPField.Name("X-CSRF-Token")!: token])
            let challenge = try #require(
                (try JSONSerialization.jsonObject(with: Data(options.text.utf8)) as? [String: Any])?["challenge"] as? String)
            let assertion = authenticator.getAssertion(credential: passkey, challenge: try #require(Base64URL.decode(challenge)))
            let form = [
                "csrf": token, "reason": "lost phone", "method": "phone",
                "credential": String(decoding: assertion.jsonBytes(), as: UTF8.self),
            ]
            let done = try await request(
                client, .post, "/console/accounts/\(accountID)/remove-method", form: form, cookie: cookie, path: path)
            #expect(done.status == .seeOther)
            let hub = try await call(client, .get, "/me/auth-methods", token: access)
            #expect(hub.body["phone"] is NSNull)
            // A confirmation is spent once: the same form again is refused.
            let again = try await request(
                client, .post, "/console/accounts/\(accountID)/remove-method", form: form, cookie: cookie, path: path)
            #expect(again.status == .unauthorized)
        }
    }

    @Test("a look another site made the staff member's browser send is refused and recorded nowhere")
    func crossSiteLooks() async throws {
        try await withConsole { client, db, console in
            let authenticator = SoftAuthenticator()
            let cookie = try await signIn(client, authenticator, try await enrol(client, db, console, authenticator))
            let access = try await signUp(client, email: "ana@example.com")
            let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
            for site in ["same-site", "cross-site"] {
                let search = try await request(
                    client, .get, "/console/accounts?by=email&q=ana%40example.com", cookie: cookie, origin: nil,
                    headers: [HTTPField.Name("Sec-Fetch-Site")!: site])
                #expect(search.status == .forbidden)
                let page = try await request(
                    client, .get, "/console/accounts/\(accountID)", cookie: cookie, origin: nil, path: "/console/accounts/{id}",
                    headers: [HTTPField.Name("Sec-Fetch-Site")!: site])
                #expect(page.status == .forbidden)
            }
            #expect(try await db.history(of: try #require(UUID(uuidString: accountID))).allSatisfy { $0.type != "admin.viewed" })
            let own = try await request(
                client, .get, "/console/accounts/\(accountID)", cookie: cookie, origin: nil, path: "/console/accounts/{id}",
                headers: [HTTPField.Name("Sec-Fetch-Site")!: "same-origin"])
            #expect(own.status == .ok)
        }
    }

    @Test("removing a staff member ends their session at once")
    func removalEndsSession() async throws {
        try await withConsole { client, db, console in
            let authenticator = SoftAuthenticator()
            let cookie = try await signIn(client, authenticator, try await enrol(client, db, console, authenticator))
            #expect(try await request(client, .get, "/console", cookie: cookie, origin: nil).status == .ok)
            try await console.remove(email: "nino@321.fit")
            let after = try await request(client, .get, "/console", cookie: cookie, origin: nil)
            #expect(after.status == .seeOther && after.headers[.location] == "/console/sign-in")
        }
    }
}
