import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerTestSupport
import NIOCore
import Testing

@testable import LedgerServer

@Suite("HTTP: the pages behind the email links", .timeLimit(.minutes(10)))
struct LinkPagesTests {
    static let pageHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'self'"),
        ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"), ("Cache-Control", "no-store"),
    ]

    struct Page {
        let status: HTTPResponse.Status
        let html: String
        let headers: HTTPFields
    }

    func page(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, form: [String: String]? = nil) async throws
        -> Page
    {
        var headers: HTTPFields = [:]
        var body: ByteBuffer?
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
            body = ByteBuffer(
                string: form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(
                    separator: "&"))
        }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body) { response in
            Page(status: response.status, html: String(buffer: response.body), headers: response.headers)
        }
    }

    func expectPageHeaders(_ page: Page, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(page.headers[.contentType] == "text/html; charset=utf-8", sourceLocation: sourceLocation)
        for (name, value) in Self.pageHeaders {
            #expect(page.headers[HTTPField.Name(name)!] == value, sourceLocation: sourceLocation)
        }
    }

    @Test("every page carries the security headers; a GET shows the form and uses nothing; the POST does the work once")
    func verifyPage() async throws {
        try await MemoryBackend.with { db in
            let services = try db.dependencies {
                $0.apps.appStoreURL = "https://apps.apple.com/app/id1"
            }
            try await Application(router: buildRouter(services)).test(.router) { client in
                _ = try await signUp(client, email: "ana@example.com")
                let token = try await outboxToken(db, template: "verify_email")
                // A mail scanner's HEAD: the page's status and headers, no body, nothing used.
                let head = try await page(client, .head, "/verify-email?token=\(token)")
                #expect(head.status == .ok && head.html.isEmpty)
                expectPageHeaders(head)
                // A form over 64 KiB: 413 as a page, nothing used.
                let huge = try await page(
                    client, .post, "/verify-email", form: ["token": token, "pad": String(repeating: "x", count: 66_000)])
                #expect(huge.status == .contentTooLarge && huge.html.contains("The request body is larger than 64 KiB."))
                expectPageHeaders(huge)
                for _ in 0..<2 {
                    let shown = try await page(client, .get, "/verify-email?token=\(token)")
                    #expect(shown.status == .ok)
                    expectPageHeaders(shown)
                    #expect(shown.html.contains("Verify your email") && shown.html.contains("name=\"token\" value=\"\(token)\""))
                    #expect(shown.html.contains("Install the app to continue") && shown.html.contains("https://apps.apple.com/app/id1"))
                }
                let done = try await page(client, .post, "/verify-email", form: ["token": token])
                #expect(done.status == .ok && done.html.contains("Your email is verified."))
                expectPageHeaders(done)
                let again = try await page(client, .post, "/verify-email", form: ["token": token])
                #expect(again.status == .gone && again.html.contains("This link has expired"))
                #expect(again.html.contains("Verification links expire after 30 minutes. Request a new one to try again."))
                expectPageHeaders(again)
                // Opened again, used, the link shows the expired page at once, with no form;
                // so does a token nobody issued, or none.
                for uri in ["/verify-email?token=\(token)", "/verify-email?token=lv_unknown", "/verify-email"] {
                    let gone = try await page(client, .get, uri)
                    #expect(gone.status == .gone && gone.html.contains("This link has expired") && !gone.html.contains("<form"))
                    expectPageHeaders(gone)
                }
                let css = try await client.execute(uri: "/pages/style.css", method: .get) { $0.headers[.contentType] }
                #expect(css == "text/css; charset=utf-8")
            }
        }
    }

    @Test(
        "a link opened past its 30 minutes shows the expired page at once, not a form whose POST would fail; until then the form, with no app to install when no store is configured"
    )
    func expiredOnOpen() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                _ = try await signUp(client, email: "cy@example.com")
                _ = try await call(client, .post, "/auth/password/forgot", ["email": "cy@example.com"])
                let token = try await outboxToken(db, template: "password_reset")
                db.clock.advance(by: 1_799)
                let live = try await page(client, .get, "/reset-password?token=\(token)")
                #expect(live.status == .ok && live.html.contains("<form"))
                // No store's address configured: no "Install the app" offering nothing to follow.
                #expect(!live.html.contains("Install the app to continue") && !live.html.contains("class=\"stores\""))
                db.clock.advance(by: 2)
                let gone = try await page(client, .get, "/reset-password?token=\(token)")
                #expect(gone.status == .gone && gone.html.contains("This link has expired") && !gone.html.contains("<form"))
                // Another page's link is not this page's: a reset token on the verify page.
                _ = try await call(client, .post, "/auth/password/forgot", ["email": "cy@example.com"])
                let fresh = try await outboxToken(db, template: "password_reset")
                #expect(try await page(client, .get, "/verify-email?token=\(fresh)").status == .gone)
                #expect(try await page(client, .get, "/reset-password?token=\(fresh)").status == .ok)
            }
        }
    }

    @Test("the re-auth link's page has no form and does not show its token: only the app that asked can use it; used, it has expired")
    func reauthPage() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "di@example.com")
                #expect(try await call(client, .post, "/auth/reauth/email-link", token: access).status == .accepted)
                let token = try await outboxToken(db, template: "reauth_link")
                let shown = try await page(client, .get, "/reauth?token=\(token)")
                #expect(shown.status == .ok && shown.html.contains("<h1>Confirm it"))
                #expect(shown.html.contains("the app finishes the check there") && !shown.html.contains("<form"))
                #expect(!shown.html.contains(token))
                expectPageHeaders(shown)
                // Opening the page used nothing: the app still confirms it, once.
                let confirmed = try await call(client, .post, "/auth/reauth/email-link/confirm", ["token": token])
                #expect(confirmed.string("reauth_token") != nil)
                let used = try await page(client, .get, "/reauth?token=\(token)")
                #expect(used.status == .gone && used.html.contains("Links to confirm it") && !used.html.contains("<form"))
                #expect(try await page(client, .post, "/reauth", form: ["token": token]).status.code >= 400)
                // A link whose session has ended grants nothing: the page says so too.
                db.clock.advance(by: 31)  // the resend countdown
                #expect(try await call(client, .post, "/auth/reauth/email-link", token: access).status == .accepted)
                let orphan = try await outboxToken(db, template: "reauth_link")
                #expect(try await page(client, .get, "/reauth?token=\(orphan)").status == .ok)
                #expect(try await call(client, .post, "/auth/logout", token: access).status == .noContent)
                #expect(try await page(client, .get, "/reauth?token=\(orphan)").status == .gone)
            }
        }
    }

    @Test("the reset page: both passwords must match, the API's rule messages show inline, and then sign-in works with the new one")
    func resetPage() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                _ = try await signUp(client, email: "bo@example.com")
                _ = try await call(client, .post, "/auth/password/forgot", ["email": "bo@example.com"])
                let token = try await outboxToken(db, template: "password_reset")
                let shown = try await page(client, .get, "/reset-password?token=\(token)")
                #expect(
                    shown.html.contains("Set a new password") && shown.html.contains("<label for=\"new_password\">New password</label>"))
                #expect(shown.html.contains("Confirm new password") && shown.html.contains("At least 8 characters"))
                let mismatch = try await page(
                    client, .post, "/reset-password", form: ["token": token, "new_password": "copper-lantern-77", "confirm_password": "x"])
                #expect(mismatch.status == .unprocessableContent)
                #expect(mismatch.html.contains("Passwords don&#39;t match.") || mismatch.html.contains("Passwords don't match."))
                let weak = try await page(
                    client, .post, "/reset-password", form: ["token": token, "new_password": "1234567", "confirm_password": "1234567"])
                #expect(weak.status == .unprocessableContent)
                #expect(weak.html.contains("Password must be at least 8 characters.") && weak.html.contains("name=\"token\""))
                let done = try await page(
                    client, .post, "/reset-password",
                    form: ["token": token, "new_password": "copper-lantern-77", "confirm_password": "copper-lantern-77"])
                #expect(done.status == .ok && done.html.contains("Password updated. Sign in with your new password."))
                #expect(try await logIn(client, email: "bo@example.com", password: "copper-lantern-77").isEmpty == false)
                #expect(try await page(client, .get, "/reset-password?token=\(token)").status == .gone)
                #expect(
                    try await page(
                        client, .post, "/reset-password",
                        form: ["token": token, "new_password": "copper-lantern-77", "confirm_password": "copper-lantern-77"]
                    ).status == .gone)
            }
        }
    }

    @Test("the revert page takes the new password twice and says what it removed; a dead link is the expired page whatever the passwords")
    func revertPage() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let grant = try await passwordGrant(client, token: access)
                #expect(
                    try await call(
                        client, .post, "/auth/email/request-change", ["new_email": "eve@example.com"], token: access, reauth: grant
                    )
                    .status == .accepted)
                let confirm = try await outboxToken(db, template: "email_change_confirm")
                #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": confirm]).status == .ok)
                let token = try await outboxToken(db, template: "email_changed_notice")
                let shown = try await page(client, .get, "/revert-email?token=\(token)")
                #expect(shown.status == .ok && shown.html.contains("<label for=\"new_password\">New password</label>"))
                let dead = try await page(
                    client, .post, "/revert-email", form: ["token": "nope", "new_password": "a", "confirm_password": "b"])
                #expect(dead.status == .gone)
                let mismatch = try await page(
                    client, .post, "/revert-email", form: ["token": token, "new_password": "amber-orchard-52", "confirm_password": "x"])
                #expect(mismatch.status == .unprocessableContent)
                let done = try await page(
                    client, .post, "/revert-email",
                    form: ["token": token, "new_password": "amber-orchard-52", "confirm_password": "amber-orchard-52"])
                #expect(done.status == .ok && done.html.contains("signed out everywhere"))
                // The phone was added by the session that moved the email: the page says it went.
                #expect(done.html.contains("we also removed: your phone number."))
                #expect(try await logIn(client, email: "ana@example.com", password: "amber-orchard-52").isEmpty == false)
                #expect(
                    try await page(
                        client, .post, "/revert-email",
                        form: ["token": token, "new_password": "amber-orchard-52", "confirm_password": "amber-orchard-52"]
                    ).status == .gone)
            }
        }
    }

    @Test("the app-link documents list the link paths and passkey sharing for the configured apps, and are 404 without them")
    func wellKnown() async throws {
        try await MemoryBackend.with { db in
            let services = try db.dependencies {
                $0.apps.iosAppIDs = ["TEAM123.fit.321.app"]
                $0.apps.androidPackage = "fit.threetwoone"
                $0.apps.androidCertificates = ["AB:CD"]
            }
            try await Application(router: buildRouter(services)).test(.router) { client in
                let apple = try await call(client, .get, "/.well-known/apple-app-site-association")
                let details = ((apple.body["applinks"] as? [String: Any])?["details"] as? [[String: Any]])?.first
                #expect(details?["appIDs"] as? [String] == ["TEAM123.fit.321.app"])
                let paths = (details?["components"] as? [[String: Any]])?.compactMap { $0["/"] as? String }
                #expect(paths == ["/verify-email", "/reset-password", "/confirm-email-change", "/revert-email", "/reauth"])
                #expect((apple.body["webcredentials"] as? [String: Any])?["apps"] as? [String] == ["TEAM123.fit.321.app"])
                let android = try await client.execute(uri: "/.well-known/assetlinks.json", method: .get) { response in
                    try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [[String: Any]]
                }
                #expect((android?.first?["target"] as? [String: Any])?["package_name"] as? String == "fit.threetwoone")
                #expect(
                    android?.first?["relation"] as? [String] == [
                        "delegate_permission/common.handle_all_urls", "delegate_permission/common.get_login_creds",
                    ])
            }
            try await testApplication(db).test(.router) { client in
                let android = try await call(client, .get, "/.well-known/assetlinks.json")
                let apple = try await call(client, .get, "/.well-known/apple-app-site-association")
                #expect(android.status == .notFound && apple.status == .notFound)
            }
        }
    }

    @Test("Accept-Language picks the copy (ka, en, ru) it prefers most, English otherwise; every page has every language's words")
    func language() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                for (header, lang, title) in [
                    ("ka-GE, en;q=0.5", "ka", "ბმულს ვადა გაუვიდა"), ("fr, ru;q=0.9, en;q=0.8", "ru", "Срок действия ссылки истёк"),
                    ("de", "en", "This link has expired"), ("ru;q=0, en", "en", "This link has expired"),
                ] {
                    let html = try await client.execute(uri: "/verify-email?token=x", method: .get, headers: [.acceptLanguage: header]) {
                        String(buffer: $0.body)
                    }
                    #expect(html.contains("<html lang=\"\(lang)\">") && html.contains(title), "\(header)")
                }
            }
        }
        // Every language has a page for every kind, with its own words (none left in English).
        for copy in [LinkPageCopy.georgian, .russian] {
            #expect(Set(copy.pages.keys) == Set(LinkPages.Kind.allCases))
            for kind in LinkPages.Kind.allCases {
                let page = try #require(copy.pages[kind])
                #expect(page.title != LinkPageCopy.english.pages[kind]?.title && page.expired != LinkPageCopy.english.pages[kind]?.expired)
            }
            #expect(Set(copy.methodNames.keys) == Set(LinkPageCopy.english.methodNames.keys))
        }
    }

    @Test("a failure the page did not expect is a page too (same headers), with the API's message: a new address taken meanwhile")
    func troublePage() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let grant = try await passwordGrant(client, token: access)
                _ = try await call(
                    client, .post, "/auth/email/request-change", ["new_email": "ana.new@example.com"], token: access, reauth: grant)
                let token = try await outboxToken(db, template: "email_change_confirm")
                _ = try await signUp(client, email: "ana.new@example.com")
                let taken = try await page(client, .post, "/confirm-email-change", form: ["token": token])
                #expect(taken.status == .conflict && taken.html.contains("This email is already in use by another account."))
                expectPageHeaders(taken)
            }
        }
    }
}
