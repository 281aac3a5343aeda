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

@Suite("HTTP: profile, handles, sessions, support", .timeLimit(.minutes(10)))
struct ProfileEndpointTests {
    @Test("profile updates, handle rules and claims, availability checks")
    func profileAndHandles() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                let ana = try await signUp(client, email: "ana@example.com", handle: "Handz")
                let bob = try await signUp(client, email: "bob@example.com")
                try await client.execute(
                    uri: "/me/profile", method: .patch, headers: bearer(bob), body: jsonBody(["handle": "handz"])
                ) { response in
                    expectConforms(response, "patch", "/me/profile")
                    #expect(response.status == .conflict)
                    let decoded = try json(response)
                    #expect(decoded["error"] as? String == "handle_taken")
                }
                try await client.execute(
                    uri: "/me/profile", method: .patch, headers: bearer(bob), body: jsonBody(["handle": "no"])
                ) { response in
                    expectConforms(response, "patch", "/me/profile")
                    #expect(response.status == .unprocessableContent)
                }
                try await client.execute(
                    uri: "/me/profile", method: .patch, headers: bearer(bob), body: jsonBody(["handle": "Bob_1", "display_name": "Bob"])
                ) { response in
                    expectConforms(response, "patch", "/me/profile")
                    let body = try json(response)
                    #expect(body["handle"] as? String == "Bob_1")
                    #expect(body["handle_is_temporary"] as? Bool == false)
                    #expect(body["display_name"] as? String == "Bob")
                }
                try await client.execute(
                    uri: "/me/profile", method: .patch, headers: bearer(bob), body: ByteBuffer(string: #"{"display_name": null}"#)
                ) { response in
                    let body = try json(response)
                    #expect(body["display_name"] is NSNull)
                    #expect(body["handle"] as? String == "Bob_1")
                }
                for (handle, status, available) in [
                    ("HANDZ", 200, false), ("bob_1", 200, false), ("fresh_one", 200, true), ("a", 422, false),
                ] {
                    try await client.execute(uri: "/handles/available?handle=\(handle)", method: .get) { response in
                        expectConforms(response, "get", "/handles/available")
                        #expect(Int(response.status.code) == status)
                        let decoded = try json(response)
                        if status == 200 { #expect(decoded["available"] as? Bool == available) }
                        if status == 422 {
                            #expect(decoded["error"] as? String == "validation_failed")
                            #expect((decoded["errors"] as? [[String: Any]])?.first?["code"] as? String == "invalid_handle")
                        }
                    }
                }
                try await client.execute(uri: "/auth/email-available?email=ANA@example.com", method: .get, headers: bearer(bob)) {
                    response in
                    expectConforms(response, "get", "/auth/email-available")
                    let decoded = try json(response)
                    #expect(decoded["available"] as? Bool == false)
                }
                try await client.execute(uri: "/auth/email-available?email=new@example.com", method: .get, headers: bearer(ana)) {
                    let decoded = try json($0)
                    #expect(decoded["available"] as? Bool == true)
                }
                try await client.execute(uri: "/auth/email-available?email=nope", method: .get, headers: bearer(ana)) { response in
                    expectConforms(response, "get", "/auth/email-available")
                    let body = try json(response)
                    #expect(response.status == .unprocessableContent)
                    #expect(body["error"] as? String == "invalid_email")
                    #expect(body["message"] as? String == "Enter a valid email address.")
                }
                try await client.execute(uri: "/auth/email-available?email=a@b.co", method: .get) { response in
                    expectConforms(response, "get", "/auth/email-available")
                    #expect(response.status == .unauthorized)
                }
            }
        }
    }

    @Test("email availability checks: 30 per account per 15 minutes, then 429 until the window ends")
    func emailCheckLimit() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                let ana = try await signUp(client, email: "ana@example.com")
                let bob = try await signUp(client, email: "bob@example.com")
                func check(_ token: String, _ email: String = "someone@example.com") async throws -> (
                    HTTPResponse.Status, [String: Any], String?
                ) {
                    try await client.execute(uri: "/auth/email-available?email=\(email)", method: .get, headers: bearer(token)) {
                        response in
                        expectConforms(response, "get", "/auth/email-available")
                        return (response.status, try json(response), response.headers[.retryAfter])
                    }
                }
                // A malformed address is refused before it counts.
                #expect(try await check(ana, "nope").0 == .unprocessableContent)
                for _ in 0..<30 { #expect(try await check(ana).0 == .ok) }
                db.clock.advance(by: 60)
                let (status, body, header) = try await check(ana)
                #expect(status == .tooManyRequests)
                #expect(body["error"] as? String == "rate_limited")
                #expect(body["message"] as? String == "Too many requests. Try again later.")
                #expect(body["retry_after"] as? Int == 840)
                #expect(header == "840")
                #expect(body["available"] == nil)
                // Another account has its own count.
                #expect(try await check(bob).0 == .ok)
                db.clock.advance(by: 839)
                #expect(try await check(ana).0 == .tooManyRequests)
                db.clock.advance(by: 1)
                // The access token has expired by now too: sign in again.
                let fresh = try await logIn(client, email: "ana@example.com")
                let (again, answer, _) = try await check(fresh, "BOB@example.com")
                #expect(again == .ok)
                #expect(answer["available"] as? Bool == false)
            }
        }
    }

    @Test("sessions are listed with the current one marked, and revoked one by one")
    func sessions() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                let first = try await signUp(client, email: "ana@example.com")
                let second = try await logIn(client, email: "ana@example.com")
                let other = try await signUp(client, email: "bob@example.com")
                var secondID = ""
                try await client.execute(uri: "/me/sessions", method: .get, headers: bearer(first)) { response in
                    expectConforms(response, "get", "/me/sessions")
                    let list = try json(response)["sessions"] as? [[String: Any]] ?? []
                    #expect(list.count == 2)
                    #expect(list.filter { $0["current"] as? Bool == true }.count == 1)
                    secondID = list.first { $0["current"] as? Bool == false }?["id"] as? String ?? ""
                }
                // Another account cannot revoke it.
                try await client.execute(uri: "/me/sessions/\(secondID)", method: .delete, headers: bearer(other)) { response in
                    expectConforms(response, "delete", "/me/sessions/{id}")
                    #expect(response.status == .notFound)
                }
                try await client.execute(uri: "/me/sessions/\(secondID)", method: .delete, headers: bearer(first)) { response in
                    expectConforms(response, "delete", "/me/sessions/{id}")
                    #expect(response.status == .noContent)
                }
                try await client.execute(uri: "/me", method: .get, headers: bearer(second)) { #expect($0.status == .unauthorized) }
                try await client.execute(uri: "/me", method: .get, headers: bearer(first)) { #expect($0.status == .ok) }
                try await client.execute(uri: "/me/sessions/not-a-uuid", method: .delete, headers: bearer(first)) {
                    #expect($0.status == .notFound)
                }
            }
        }
    }

    @Test("the support prefill carries the user id in the subject and a metadata block")
    func support() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                let token = try await signUp(client, email: "ana@example.com")
                var headers = bearer(token)
                headers[HTTPField.Name("X-App-Version")!] = "3.2.1"
                headers[.userAgent] = "321Fit/3.2.1 iOS/18.1"
                try await client.execute(uri: "/me/support", method: .get, headers: headers) { response in
                    expectConforms(response, "get", "/me/support")
                    let body = try json(response)
                    let userID = body["user_id"] as? String ?? ""
                    #expect(userID.hasPrefix("usr_") && userID.count == 14)
                    #expect(body["subject"] as? String == "Help [\(userID)]")
                    #expect(body["support_email"] as? String == "support@321.fit")
                    let text = body["body"] as? String ?? ""
                    #expect(text.hasPrefix("\n\n"))
                    #expect(text.contains("User ID: \(userID)"))
                    #expect(text.contains("App version: 3.2.1"))
                    #expect(text.contains("Device: 321Fit/3.2.1 iOS/18.1"))
                    // Support finds the account from it.
                    let profile = try await call(client, .get, "/me", token: token)
                    #expect(profile.string("user_id") == userID)
                    // It is the account id's public form, which AccountDirectory looks up
                    // (AccountServiceTests.directoryFindsPublicID).
                    let me = try #require(profile.string("account_id").flatMap(UUID.init(uuidString:)))
                    #expect(PublicUserID(accountID: me).description == userID)
                }
            }
        }
    }
}
