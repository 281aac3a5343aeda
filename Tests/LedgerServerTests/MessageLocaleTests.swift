import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import Testing

@Suite("HTTP: messages in the account's language (ka, en, ru)", .timeLimit(.minutes(10)))
struct MessageLocaleTests {
    @Test(
        "Accept-Language at sign-up and sign-in picks the account's language (the most preferred the service writes); a silent sign-in keeps it"
    )
    func accountLanguage() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client async throws in
                let credentials: [String: Any] = ["email": "ana@example.com", "password": "violet-harbor-91"]
                // Portuguese is not written: English, the best the header allows.
                #expect(try await post(client, "/auth/email/signup", credentials, language: "pt-br,pt;q=0.9,en;q=0.5") == .created)
                #expect(try await newestLocale(db, template: "verify_email") == "en")

                #expect(try await post(client, "/auth/email/login", credentials, language: "ka-GE, en;q=0.8") == .ok)
                // A client that says nothing does not undo what the last one said.
                #expect(try await post(client, "/auth/email/login", credentials, language: nil) == .ok)
                #expect(try await post(client, "/auth/password/forgot", ["email": "ana@example.com"], language: "de") == .accepted)
                #expect(try await newestLocale(db, template: "password_reset") == "ka-GE")

                // A header that is no language tag never names a template file.
                #expect(try await post(client, "/auth/email/login", credentials, language: "../../etc/passwd") == .ok)
                db.clock.advance(by: 3600)
                #expect(try await post(client, "/auth/password/forgot", ["email": "ana@example.com"], language: nil) == .accepted)
                #expect(try await newestLocale(db, template: "password_reset") == "ka-GE")
            }
        }
    }

    @Test("the profile's language comes before the sign-ins'; null goes back to them; anything but ka, en or ru is 422")
    func chosenLanguage() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client async throws in
                let credentials: [String: Any] = ["email": "ana@example.com", "password": "violet-harbor-91"]
                #expect(try await post(client, "/auth/email/signup", credentials, language: "ka-GE") == .created)
                let access = try await logIn(client, email: "ana@example.com")
                let refused = try await call(client, .patch, "/me/profile", ["locale": "fr"], token: access)
                #expect(refused.status == .unprocessableContent && refused.problemCodes == ["invalid_locale"])
                #expect(try await call(client, .patch, "/me/profile", ["locale": "ru"], token: access).status == .ok)
                #expect(try await db.storedEventCount(type: "profile.locale_set") == 1)
                // A sign-in in Georgian does not undo the choice.
                #expect(try await post(client, "/auth/email/login", credentials, language: "ka") == .ok)
                #expect(try await post(client, "/auth/password/forgot", ["email": "ana@example.com"], language: "de") == .accepted)
                #expect(try await newestLocale(db, template: "password_reset") == "ru")
                _ = try await call(client, .patch, "/me/profile", ["locale": NSNull()], token: access)
                db.clock.advance(by: 3600)
                #expect(try await post(client, "/auth/password/forgot", ["email": "ana@example.com"], language: "de") == .accepted)
                #expect(try await newestLocale(db, template: "password_reset") == "ka")
                // A reset asked for in a language of the service's is in it: whoever asked reads it.
                db.clock.advance(by: 3600)
                #expect(try await post(client, "/auth/password/forgot", ["email": "ana@example.com"], language: "en") == .accepted)
                #expect(try await newestLocale(db, template: "password_reset") == "en")
            }
        }
    }

    @Test("LEDGER_DEFAULT_LOCALE writes to an account (and a code request) that says no language of the service's")
    func defaultLanguage() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db) { $0.policies.defaultLanguage = .ka }.test(.router) { client async throws in
                let credentials: [String: Any] = ["email": "ana@example.com", "password": "violet-harbor-91"]
                #expect(try await post(client, "/auth/email/signup", credentials, language: "de-DE") == .created)
                #expect(try await newestLocale(db, template: "verify_email") == "ka")
                let request: [String: Any] = ["phone": "+995511200300", "purpose": "sign_in"]
                #expect(try await post(client, "/auth/phone/request-otp", request, language: nil) == .accepted)
                #expect(try await newestLocale(db, template: "otp") == "ka")
            }
        }
        for bad in ["fr", "KA", "ka-GE"] {
            #expect(throws: ConfigurationError.self) { try LedgerConfiguration.fromEnvironment(["LEDGER_DEFAULT_LOCALE": bad]) }
        }
        #expect(try LedgerConfiguration.fromEnvironment(["LEDGER_DEFAULT_LOCALE": "ru"]).policies.defaultLanguage == .ru)
    }

    @Test("a sign-in code goes in the language of the request that asks for it, English when it names none")
    func otpLanguage() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client async throws in
                let request: [String: Any] = ["phone": "+995511200300", "purpose": "sign_in"]
                #expect(try await post(client, "/auth/phone/request-otp", request, language: "ka") == .accepted)
                #expect(try await newestLocale(db, template: "otp") == "ka")
                #expect(
                    try await post(
                        client, "/auth/phone/request-otp", ["phone": "+995511200301", "purpose": "sign_in"], language: "*;q=0.1")
                        == .accepted)
                #expect(try await newestLocale(db, template: "otp") == "en")
                // The most preferred language the service writes, by q: Russian, not French (first) or English.
                let third: [String: Any] = ["phone": "+995511200302", "purpose": "sign_in"]
                #expect(
                    try await post(client, "/auth/phone/request-otp", third, language: "fr-FR, en;q=0.5, ru;q=0.8, ka;q=0") == .accepted)
                #expect(try await newestLocale(db, template: "otp") == "ru")
            }
        }
    }
}

/// The locale the newest outbox row of `template` was written in.
private func newestLocale(_ db: some TestBackend, template: String) async throws -> String? {
    try await db.newestMessage(template: template, to: nil)?.locale
}

private func post(
    _ client: some TestClientProtocol, _ uri: String, _ body: [String: Any], language: String?
) async throws -> HTTPResponse.Status {
    var headers = jsonHeaders
    if let language { headers[.acceptLanguage] = language }
    return try await client.execute(uri: uri, method: .post, headers: headers, body: jsonBody(body)) { $0.status }
}
