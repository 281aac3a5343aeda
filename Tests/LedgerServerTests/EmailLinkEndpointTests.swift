import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: email verification and password reset", .timeLimit(.minutes(10)))
struct EmailLinkEndpointTests {
    @Test("resend_after is the configured countdown, and the window's rest once its resends are spent (LEDGER_LINK_RESEND_*)")
    func resendAfter() async throws {
        try await MemoryBackend.with { db in
            let services = try db.dependencies {
                $0.policies.linkResend.interval = 10
                $0.policies.linkResend.limit = 2
                $0.policies.linkResend.window = 600
            }
            try await Application(router: buildRouter(services)).test(.router) { client in
                _ = try await signUp(client, email: "ana@example.com")
                func forgot() async throws -> Answer {
                    try await call(client, .post, "/auth/password/forgot", ["email": "ana@example.com"])
                }
                let first = try await forgot()
                #expect(first.status == .accepted && first.body["resend_after"] as? Int == 10)
                let early = try await forgot()
                #expect(early.status == .tooManyRequests && early.body["retry_after"] as? Int == 10)
                db.clock.advance(by: 10)
                #expect(try await forgot().body["resend_after"] as? Int == 10)
                db.clock.advance(by: 10)
                // The second resend spends the window: the app counts down to its end, not 10 s.
                let last = try await forgot()
                #expect(last.status == .accepted && last.body["resend_after"] as? Int == 580)
                db.clock.advance(by: 10)
                let refused = try await forgot()
                #expect(refused.status == .tooManyRequests && refused.body["retry_after"] as? Int == 570)
            }
        }
    }

    @Test("verification links are one-shot, expire after 30 minutes, and flip email_verified")
    func verification() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let first = try await outboxToken(db, template: "verify_email")
                // A resent link; the first one expires while the second is still fresh.
                db.clock.advance(by: 600)
                try await client.execute(uri: "/auth/email/resend-verification", method: .post, headers: bearer(access)) { response in
                    expectConforms(response, "post", "/auth/email/resend-verification")
                    #expect(response.status == .accepted)
                }
                let second = try await outboxToken(db, template: "verify_email")
                #expect(second != first)
                db.clock.advance(by: 1201)
                try await client.execute(uri: "/auth/email/verify", method: .post, headers: jsonHeaders, body: jsonBody(["token": first])) {
                    response in
                    expectConforms(response, "post", "/auth/email/verify")
                    #expect(response.status == .gone)
                    let body = try json(response)
                    #expect(body["error"] as? String == "link_expired")
                    #expect(body["message"] as? String == "This link has expired")
                }
                try await client.execute(uri: "/auth/email/verify", method: .post, headers: jsonHeaders, body: jsonBody(["token": second]))
                { response in
                    expectConforms(response, "post", "/auth/email/verify")
                    #expect(response.status == .ok)
                }
                try await client.execute(uri: "/auth/email/verify", method: .post, headers: jsonHeaders, body: jsonBody(["token": second]))
                {
                    #expect($0.status == .gone)
                }
                // 30 minutes on, the first access token has expired: sign in again.
                let fresh = try await signIn(client, email: "ana@example.com")
                try await client.execute(uri: "/me", method: .get, headers: bearer(fresh)) { response in
                    let body = try json(response)
                    #expect(body["email_verified"] as? Bool == true)
                }
                try await client.execute(uri: "/auth/email/verify", method: .post, headers: jsonHeaders, body: jsonBody(["token": "junk"]))
                {
                    #expect($0.status == .gone)
                }
            }
        }
    }

    @Test("the first send and 3 resends per 15 minutes; the next is 429 with retry_after")
    func resendLimit() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                for _ in 1...3 {
                    db.clock.advance(by: 60)
                    try await client.execute(uri: "/auth/email/resend-verification", method: .post, headers: bearer(access)) {
                        #expect($0.status == .accepted)
                    }
                }
                try await client.execute(uri: "/auth/email/resend-verification", method: .post, headers: bearer(access)) { response in
                    expectConforms(response, "post", "/auth/email/resend-verification")
                    #expect(response.status == .tooManyRequests)
                    let body = try json(response)
                    #expect(body["error"] as? String == "rate_limited")
                    #expect(body["retry_after"] as? Int == 720)
                    #expect(response.headers[.retryAfter] == "720")
                }
                db.clock.advance(by: 720)
                let fresh = try await signIn(client, email: "ana@example.com")
                try await client.execute(uri: "/auth/email/resend-verification", method: .post, headers: bearer(fresh)) {
                    #expect($0.status == .accepted)
                }
            }
        }
    }

    @Test("forgot and reset: unknown email 404, rules checked, every session revoked, link one-shot")
    func passwordReset() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
            try await app.test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                try await client.execute(
                    uri: "/auth/password/forgot", method: .post, headers: jsonHeaders, body: jsonBody(["email": "nobody@example.com"])
                ) { response in
                    expectConforms(response, "post", "/auth/password/forgot")
                    #expect(response.status == .notFound)
                    let body = try json(response)
                    #expect(body["error"] as? String == "no_account")
                    #expect(body["message"] as? String == "No account found for that email.")
                }
                try await client.execute(
                    uri: "/auth/password/forgot", method: .post, headers: jsonHeaders, body: jsonBody(["email": "ANA@example.com"])
                ) { response in
                    expectConforms(response, "post", "/auth/password/forgot")
                    #expect(response.status == .accepted)
                }
                let token = try await outboxToken(db, template: "password_reset")
                try await client.execute(
                    uri: "/auth/password/reset", method: .post, headers: jsonHeaders,
                    body: jsonBody(["token": token, "new_password": "ana.example1"])
                ) { response in
                    expectConforms(response, "post", "/auth/password/reset")
                    #expect(response.status == .unprocessableContent)
                    let errors = try json(response)["errors"] as? [[String: String]]
                    #expect(errors?.map { $0["code"] ?? "" } == ["similar_to_email"])
                    #expect(errors?.first?["field"] == "new_password")
                }
                try await client.execute(
                    uri: "/auth/password/reset", method: .post, headers: jsonHeaders,
                    body: jsonBody(["token": token, "new_password": "copper-lantern-77"])
                ) { response in
                    expectConforms(response, "post", "/auth/password/reset")
                    #expect(response.status == .ok)
                }
                try await client.execute(uri: "/me", method: .get, headers: bearer(access)) { #expect($0.status == .unauthorized) }
                try await client.execute(
                    uri: "/auth/password/reset", method: .post, headers: jsonHeaders,
                    body: jsonBody(["token": token, "new_password": "another-pass-88"])
                ) { #expect($0.status == .gone) }
                try await client.execute(
                    uri: "/auth/email/login", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "ana@example.com", "password": "copper-lantern-77"])
                ) { #expect($0.status == .ok) }
                try await client.execute(uri: "/me/auth-methods", method: .get, headers: bearer(access)) {
                    #expect($0.status == .unauthorized)
                }
            }
        }
    }
}
