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

@Suite("HTTP: accounts and sessions", .timeLimit(.minutes(10)))
struct AuthEndpointTests {
    @Test("sign up, read /me and the hub, refresh, log out")
    func happyPath() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                var access = ""
                var refresh = ""
                try await client.execute(
                    uri: "/auth/email/signup", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "Ana@Example.com", "password": "violet-harbor-91", "display_name": "Ana", "extra": 1])
                ) { response in
                    #expect(response.status == .created)
                    let body = try json(response)
                    #expect(
                        Set(body.keys) == [
                            "account_id", "session_id", "access_token", "refresh_token", "expires_in", "email_verified", "device_token",
                        ])
                    #expect((body["device_token"] as? String)?.hasPrefix("dv_") == true)
                    #expect(body["email_verified"] as? Bool == false)
                    #expect(body["expires_in"] as? Int == 900)
                    access = body["access_token"] as? String ?? ""
                    refresh = body["refresh_token"] as? String ?? ""
                }
                try await client.execute(uri: "/me", method: .get, headers: bearer(access)) { response in
                    #expect(response.status == .ok)
                    let body = try json(response)
                    #expect(body["email"] as? String == "Ana@Example.com")
                    #expect(body["display_name"] as? String == "Ana")
                    #expect(body["handle_is_temporary"] as? Bool == true)
                    // The short id people give support, the same as /me/support's; account_id is the UUID.
                    let accountID = try #require(UUID(uuidString: body["account_id"] as? String ?? ""))
                    #expect(body["user_id"] as? String == PublicUserID(accountID: accountID).description)
                    #expect((body["created_at"] as? String)?.hasSuffix("Z") == true)
                }
                try await client.execute(uri: "/me/auth-methods", method: .get, headers: bearer(access)) { response in
                    let body = try json(response)
                    #expect(
                        Set(body.keys) == [
                            "phone", "phone_region", "email", "pending_email", "has_password", "apple_linked", "google_linked",
                            "email_verified", "password_changed_at", "mfa", "passkeys",
                        ])
                    #expect(body["phone"] is NSNull && body["passkeys"] as? Int == 0)
                    #expect(body["has_password"] as? Bool == true)
                    #expect(body["apple_linked"] as? Bool == false)
                }
                try await client.execute(
                    uri: "/auth/token/refresh", method: .post, headers: jsonHeaders, body: jsonBody(["refresh_token": refresh])
                ) { response in
                    #expect(response.status == .ok)
                    access = try json(response)["access_token"] as? String ?? ""
                }
                try await client.execute(
                    uri: "/auth/token/refresh", method: .post, headers: jsonHeaders, body: jsonBody(["refresh_token": refresh])
                ) { response in
                    #expect(response.status == .unauthorized)
                    let body = try json(response)
                    #expect(body["error"] as? String == "session_expired")
                    #expect(body["message"] as? String == "Your session has expired. Sign in again.")
                    #expect(body["last_method"] as? String == "email")
                }
                // A token that names no session: nothing to highlight.
                try await client.execute(
                    uri: "/auth/token/refresh", method: .post, headers: jsonHeaders, body: jsonBody(["refresh_token": "lr_unknown"])
                ) { response in
                    #expect(response.status == .unauthorized)
                    let body = try json(response)
                    #expect(body["error"] as? String == "session_expired")
                    #expect(body.keys.contains("last_method") && body["last_method"] is NSNull)
                }
                // The reuse revoked the session: the new access token is dead too.
                try await client.execute(uri: "/me", method: .get, headers: bearer(access)) { response in
                    #expect(response.status == .unauthorized)
                    let body = try json(response)
                    #expect(body["error"] as? String == "unauthorized")
                }
            }
        }
    }

    @Test("logout revokes the session; sign-in errors use the product copy")
    func logoutAndSignIn() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                try await client.execute(
                    uri: "/auth/email/signup", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "ana@example.com", "password": "violet-harbor-91"])
                ) { #expect($0.status == .created) }
                try await client.execute(
                    uri: "/auth/email/signup", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "ANA@example.com", "password": "violet-harbor-91"])
                ) { response in
                    #expect(response.status == .conflict)
                    let body = try json(response)
                    #expect(body["error"] as? String == "email_taken")
                    #expect(body["message"] as? String == "This email is already in use. Log in instead.")
                }
                // Non-ASCII addresses are one claim however they are typed (normalized in Swift,
                // never by PostgreSQL's locale-bound lower()).
                for (index, email) in ["\u{C4}rger@example.com", "\u{E4}rger@example.com", "A\u{308}rger@example.com"].enumerated() {
                    try await client.execute(
                        uri: "/auth/email/signup", method: .post, headers: jsonHeaders,
                        body: jsonBody(["email": email, "password": "violet-harbor-91"])
                    ) { #expect($0.status == (index == 0 ? .created : .conflict), "\(email)") }
                }
                try await client.execute(
                    uri: "/auth/email/login", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "ana@example.com", "password": "not-the-password"])
                ) { response in
                    #expect(response.status == .unauthorized)
                    let body = try json(response)
                    #expect(body["error"] as? String == "invalid_credentials")
                    #expect(body["message"] as? String == "Incorrect email or password.")
                }
                var access = ""
                try await client.execute(
                    uri: "/auth/email/login", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "ana@example.com", "password": "violet-harbor-91"])
                ) { response in
                    #expect(response.status == .ok)
                    access = try json(response)["access_token"] as? String ?? ""
                }
                try await client.execute(uri: "/auth/logout", method: .post, headers: bearer(access)) { #expect($0.status == .noContent) }
                try await client.execute(uri: "/me", method: .get, headers: bearer(access)) { #expect($0.status == .unauthorized) }
                try await client.execute(uri: "/auth/logout", method: .post, headers: bearer(access)) {
                    #expect($0.status == .unauthorized)
                }
            }
        }
    }

    @Test("a NUL character, in a body, a query or a path, is a typed 4xx that changes nothing, never a 500")
    func nulCharacter() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let signUp = try await call(
                    client, .post, "/auth/email/signup",
                    ["email": "nul@example.com", "password": "violet-harbor-91", "display_name": "a\u{0}b"])
                #expect(signUp.status == .badRequest && signUp.string("error") == "invalid_request")
                #expect(signUp.string("message") == "The field display_name holds a NUL character.")
                #expect(try await db.storedEventCount() == 0)
                let access = try await LedgerServerTests.signUp(client, email: "nul@example.com")
                let profile = try await call(client, .patch, "/me/profile", ["display_name": "x\u{0}"], token: access)
                #expect(profile.status == .badRequest && profile.string("error") == "invalid_request")
                let key = try await call(client, .post, "/auth/email/login", ["email\u{0}": "nul@example.com", "password": "x"])
                #expect(key.status == .badRequest)
                for uri in [
                    "/auth/email-available?email=a%00@example.com", "/handles/available?handle=a%00b", "/countries?locale=ka%00GE",
                    "/me/reauth-options?action=change%00email",
                ] {
                    let answer = try await call(client, .get, uri, token: access)
                    #expect(answer.status.code < 500 && answer.status != .ok || uri.hasPrefix("/countries"), "\(uri): \(answer.status)")
                    #expect(answer.status.code < 500, "\(uri)")
                }
            }
        }
    }

    @Test("bad input gets a typed 4xx and changes nothing")
    func badInput() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                let cases: [(ByteBuffer, HTTPResponse.Status, String)] = [
                    (ByteBuffer(string: "{not json"), .badRequest, "invalid_request"),
                    (ByteBuffer(string: #"{"email": 42, "password": "violet-harbor-91"}"#), .badRequest, "invalid_request"),
                    (ByteBuffer(string: #"{"password": "violet-harbor-91"}"#), .badRequest, "invalid_request"),
                    (ByteBuffer(string: "[]"), .badRequest, "invalid_request"),
                    (
                        ByteBuffer(bytes: Array(#"{"email":"a@b.co","password":""#.utf8) + [0xff, 0xfe] + Array(#""}"#.utf8)), .badRequest,
                        "invalid_request"
                    ),
                    (ByteBuffer(string: #"{"email":"x","password":"1234567"}"#), .unprocessableContent, "validation_failed"),
                    (
                        ByteBuffer(string: "{\"email\":\"a@b.co\",\"password\":\"" + String(repeating: "x", count: 70_000) + "\"}"),
                        .contentTooLarge, "payload_too_large"
                    ),
                ]
                for (body, status, code) in cases {
                    try await client.execute(uri: "/auth/email/signup", method: .post, headers: jsonHeaders, body: body) { response in
                        #expect(response.status == status)
                        let decoded = try json(response)
                        #expect(decoded["error"] as? String == code)
                        #expect((decoded["message"] as? String)?.isEmpty == false)
                    }
                }
                try await client.execute(
                    uri: "/auth/email/signup", method: .post, headers: jsonHeaders,
                    body: ByteBuffer(string: #"{"email":"x","password":"1234567"}"#)
                ) { response in
                    let errors = try json(response)["errors"] as? [[String: String]]
                    #expect(errors?.map { $0["code"] ?? "" } == ["invalid_email", "too_short", "too_common", "all_digits"])
                    #expect(errors?.first?["field"] == "email")
                }
                // A lone bad address is answered 422 invalid_email, top level (openapi.yaml; docs/architecture.md).
                let lone = try await call(client, .post, "/auth/email/signup", ["email": "x", "password": "violet-harbor-91"])
                #expect(lone.status == .unprocessableContent && lone.string("error") == "invalid_email")
                #expect(lone.string("message") == "Enter a valid email address.")
                for token in ["", "Bearer", "Bearer la_nope", "Basic abc"] {
                    try await client.execute(uri: "/me", method: .get, headers: [.authorization: token]) { response in
                        #expect(response.status == .unauthorized)
                    }
                }
            }
            #expect(try await db.storedEventCount() == 0)
        }
    }
}
