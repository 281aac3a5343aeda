import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: verify it's you", .timeLimit(.minutes(10)))
struct ReauthEndpointTests {
    func app(_ db: MemoryBackend) throws -> some ApplicationProtocol { try testApplication(db) }

    func changePhone(_ client: some TestClientProtocol, token: String, reauth: String?) async throws -> Answer {
        try await call(
            client, .post, "/auth/phone/request-otp", ["phone": "+995511100000", "purpose": "change_phone"], token: token, reauth: reauth)
    }

    @Test("the picker: every method but the target; unknown actions 422")
    func options() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let expected: [String: [String]] = [
                    "change_phone": ["password", "email_link"], "change_email": ["password", "phone"],
                    "change_password": ["phone", "email_link"], "disconnect_apple": ["password", "phone", "email_link"],
                    "delete_account": ["password", "phone", "email_link"],
                ]
                for (action, methods) in expected {
                    let answer = try await call(client, .get, "/me/reauth-options?action=\(action)", token: access)
                    #expect(answer.body["methods"] as? [String] == methods, "\(action)")
                    #expect(answer.body["last_method"] as? Bool == false)
                }
                #expect(try await call(client, .get, "/me/reauth-options?action=dance", token: access).status == .unprocessableContent)
                #expect(try await call(client, .get, "/me/reauth-options?action=change_phone").status == .unauthorized)
            }
        }
    }

    @Test("a password grant works at 14:59 and not at 15:01; wrong passwords are 401 and lock out after 5")
    func passwordGrant() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                _ = try await accountWithPhone(client, db)
                let session = try await call(
                    client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"])
                var access = try #require(session.string("access_token"))
                let refresh = try #require(session.string("refresh_token"))
                let grant = try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access)
                #expect(grant.status == .ok)
                let reauth = try #require(grant.string("reauth_token"))
                #expect(reauth.hasPrefix("lg_"))
                let expiresAt = try #require(grant.string("expires_at").flatMap { ISO8601DateFormatter().date(from: $0) })
                #expect(expiresAt == db.clock.now().addingTimeInterval(900))
                db.clock.advance(by: 899)
                // The access token ends at 15:00 too; the session goes on with a refreshed one.
                let refreshed = try await call(client, .post, "/auth/token/refresh", ["refresh_token": refresh])
                access = try #require(refreshed.string("access_token"))
                #expect(try await changePhone(client, token: access, reauth: reauth).status == .accepted)
                db.clock.advance(by: 2)
                let late = try await changePhone(client, token: access, reauth: reauth)
                #expect(late.status == .forbidden)
                #expect(late.string("error") == "reauth_required")
                for attempt in 1...5 {
                    let wrong = try await call(client, .post, "/auth/reauth/password", ["password": "wrong-password-1"], token: access)
                    #expect(wrong.status == .unauthorized, "attempt \(attempt)")
                    #expect(wrong.string("error") == "invalid_credentials")
                }
                let locked = try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access)
                #expect(locked.status == .tooManyRequests)
                #expect(locked.headers[.retryAfter] == "900")
                let failures = try await db.storedEventCount(type: "reauth.failed")
                #expect(failures == 5)
            }
        }
    }

    @Test("an emailed link grants re-auth to the session that asked; links are one-shot")
    func emailLink() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                // The link that added the phone was sent just now: a second one within 30 s is 429.
                let early = try await call(client, .post, "/auth/reauth/email-link", token: access)
                #expect(early.status == .tooManyRequests && early.body["retry_after"] as? Int == 30)
                db.clock.advance(by: 30)
                let sent = try await call(client, .post, "/auth/reauth/email-link", token: access)
                #expect(sent.status == .accepted && sent.body["resend_after"] as? Int == 30)
                let token = try await outboxToken(db, template: "reauth_link")
                let link = try await db.queuedMessages(template: "reauth_link").first?.link
                #expect(link?.hasPrefix("https://321.fit/reauth?token=") == true)
                let confirmed = try await call(client, .post, "/auth/reauth/email-link/confirm", ["token": token])
                #expect(confirmed.status == .ok)
                let reauth = try #require(confirmed.string("reauth_token"))
                #expect(try await call(client, .post, "/auth/reauth/email-link/confirm", ["token": token]).status == .gone)
                #expect(try await changePhone(client, token: access, reauth: reauth).status == .accepted)
                let other = try await signIn(client, email: "ana@example.com")
                #expect(try await changePhone(client, token: other, reauth: reauth).status == .forbidden)
            }
        }
    }

    @Test("re-auth and password-reset links work for 30 minutes")
    func emailLinkExpiry() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                _ = try await accountWithPhone(client, db)
                for (advance, expected, newPassword) in [
                    (1801.0, HTTPResponse.Status.gone, "copper-lantern-77"), (1799, .ok, "copper-lantern-78"),
                ] {
                    let access = try await logIn(client, email: "ana@example.com")
                    db.clock.advance(by: 30)  // the resend countdown since the last link
                    #expect(try await call(client, .post, "/auth/reauth/email-link", token: access).status == .accepted)
                    let reauthToken = try await outboxToken(db, template: "reauth_link")
                    #expect(try await call(client, .post, "/auth/password/forgot", ["email": "ana@example.com"]).status == .accepted)
                    let resetToken = try await outboxToken(db, template: "password_reset")
                    db.clock.advance(by: advance)
                    #expect(try await call(client, .post, "/auth/reauth/email-link/confirm", ["token": reauthToken]).status == expected)
                    let reset = try await call(client, .post, "/auth/password/reset", ["token": resetToken, "new_password": newPassword])
                    #expect(reset.status == expected)
                }
            }
        }
    }

    @Test("a phone code grants re-auth; accounts without a phone get 409 no_phone")
    func phoneGrant() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                db.clock.advance(by: 30)
                // Another valid number than the account's is named as such, not as invalid.
                let other = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "+995511200399", "purpose": "reauth"], token: access)
                #expect(other.status == .unprocessableContent && other.string("error") == "validation_failed")
                #expect(other.problemCodes == ["not_account_phone"])
                let requestID = try await requestOTP(client, nil, purpose: "reauth", token: access)
                let grant = try await verifyOTP(client, requestID, try await otpCode(db, phone: "+995511200300"), token: access)
                #expect(grant.status == .ok)
                let reauth = try #require(grant.string("reauth_token"))
                #expect(try await changePhone(client, token: access, reauth: reauth).status == .accepted)
                let emailOnly = try await signUp(client, email: "bo@example.com")
                let noPhone = try await call(client, .post, "/auth/phone/request-otp", ["purpose": "reauth"], token: emailOnly)
                #expect(noPhone.status == .conflict)
                #expect(noPhone.string("error") == "no_phone")
                // The email-link grant that added the phone, and this one.
                let types = try await db.storedEventCount(type: "reauth.granted")
                #expect(types == 2)
            }
        }
    }
}
