import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import Testing

@Suite("HTTP: messages follow the language of the latest sign-in", .timeLimit(.minutes(10)))
struct MessageLocaleTests {
    @Test("Accept-Language at sign-up and sign-in picks the account's language; a silent sign-in keeps it")
    func accountLanguage() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client async throws in
                let credentials: [String: Any] = ["email": "ana@example.com", "password": "violet-harbor-91"]
                #expect(try await post(client, "/auth/email/signup", credentials, language: "pt-br,pt;q=0.9,en;q=0.5") == .created)
                #expect(try await newestLocale(db, template: "verify_email") == "pt-BR")

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
