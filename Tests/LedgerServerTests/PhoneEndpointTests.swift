import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: phone numbers and codes", .timeLimit(.minutes(10)))
struct PhoneEndpointTests {
    func app(_ db: MemoryBackend, configure: (inout LedgerConfiguration) -> Void = { _ in }) throws -> some ApplicationProtocol {
        try testApplication(db, behindProxy: false, configure: configure)
    }

    @Test("a new number signs up by code; the same number signs in to the same account; the hub shows it")
    func signInByPhone() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let answer = try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995 511 200 300", "purpose": "sign_in"])
                #expect(answer.status == .accepted)
                #expect(answer.body["expires_in"] as? Int == 300)
                #expect(answer.body["resend_after"] as? Int == 30)
                let requestID = try #require(answer.string("request_id"))
                let code = try await otpCode(db, phone: "+995511200300")
                #expect(code.count == 6 && code.allSatisfy(\.isNumber))
                let first = try await verifyOTP(client, requestID, code)
                #expect(first.status == .ok)
                #expect(first.string("account_id") != nil)
                let access = try #require(first.string("access_token"))
                let hub = try await call(client, .get, "/me/auth-methods", token: access)
                #expect(hub.string("phone") == "+995511200300")
                #expect(hub.string("phone_region") == "GE")
                #expect(hub.body["has_password"] as? Bool == false)
                let me = try await call(client, .get, "/me", token: access)
                #expect(me.body["handle_is_temporary"] as? Bool == true)
                // The code is used up.
                #expect(try await verifyOTP(client, requestID, code).status == .gone)
            }
        }
    }

    @Test("the same number with a picked region, and sign-in again lands in the same account")
    func signInAgain() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let first = try await phoneSignIn(client, db, "+995511200300")
                let firstMe = try await call(client, .get, "/me", token: first)
                db.clock.advance(by: 30)
                let answer = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "0511 200 300", "country": "GE", "purpose": "sign_in"])
                #expect(answer.status == .accepted)
                let verified = try await verifyOTP(
                    client, try #require(answer.string("request_id")), try await otpCode(db, phone: "+995511200300"))
                #expect(verified.string("account_id") == firstMe.string("account_id"))
                #expect(try await db.accountCount() == 1)
            }
        }
    }

    @Test("wrong codes: 401 with attempts_remaining 4…1, the 5th is 410, and the right code no longer works")
    func attempts() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let requestID = try await requestOTP(client, "+995511200300")
                let code = try await otpCode(db, phone: "+995511200300")
                for attempt in 1...4 {
                    let answer = try await verifyOTP(client, requestID, wrongCode(code))
                    #expect(answer.status == .unauthorized)
                    #expect(answer.string("error") == "incorrect_code")
                    #expect(answer.string("message") == "Code is incorrect. Try again.")
                    #expect(answer.body["attempts_remaining"] as? Int == 5 - attempt)
                }
                let fifth = try await verifyOTP(client, requestID, wrongCode(code))
                #expect(fifth.status == .gone)
                #expect(fifth.string("error") == "code_expired")
                #expect(fifth.string("message") == "Code expired. Request a new one.")
                #expect(try await verifyOTP(client, requestID, code).status == .gone)
                #expect(
                    await db.codeEventTypes() == ["phone.otp_issued"] + Array(repeating: "phone.otp_failed", count: 5) + [
                        "phone.otp_invalidated"
                    ])
                // That nothing in the stored events gives the code away: AtRestTests.codeNotInEvents.
            }
        }
    }

    @Test("the TTL edge: 4:59 verifies, 5:01 is 410")
    func ttl() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let early = try await requestOTP(client, "+995511200300")
                let earlyCode = try await otpCode(db, phone: "+995511200300")
                let late = try await requestOTP(client, "+995511200301")
                let lateCode = try await otpCode(db, phone: "+995511200301")
                db.clock.advance(by: 299)
                #expect(try await verifyOTP(client, early, earlyCode).status == .ok)
                db.clock.advance(by: 2)
                let answer = try await verifyOTP(client, late, lateCode)
                #expect(answer.status == .gone)
                #expect(answer.string("error") == "code_expired")
            }
        }
    }

    @Test("the first send and 3 resends per 15 minutes; the 5th is 429 until the moment the first leaves the window")
    func resendLimit() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                var previous: String?
                for send in 1...4 {
                    let requestID = try await requestOTP(client, "+995511200300")
                    if let previous {
                        // A resend invalidates the previous code.
                        #expect(try await verifyOTP(client, previous, "123456").status == .gone)
                    }
                    previous = requestID
                    // The countdown: a send within 30 seconds is refused.
                    db.clock.advance(by: 10)
                    let early = try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "sign_in"])
                    #expect(early.status == .tooManyRequests)
                    // After the 4th send the window's limit is the longer wait (900 - 3×30 - 10).
                    #expect(early.body["retry_after"] as? Int == (send < 4 ? 20 : 800))
                    db.clock.advance(by: 20)
                }
                // 120 seconds after the first send: the 5th is refused for 780 more.
                #expect(
                    try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "sign_in"]).status
                        == .tooManyRequests)
                let fifth = try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "sign_in"])
                #expect(fifth.status == .tooManyRequests)
                #expect(fifth.string("error") == "rate_limited")
                #expect(fifth.body["retry_after"] as? Int == 780)
                #expect(fifth.headers[.retryAfter] == "780")
                // Another purpose or another number has its own window.
                _ = try await requestOTP(client, "+995511200301")
                db.clock.advance(by: 779)
                #expect(
                    try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "sign_in"]).body[
                        "retry_after"] as? Int == 1)
                db.clock.advance(by: 1)
                _ = try await requestOTP(client, "+995511200300")
            }
        }
    }

    @Test("back navigation cancels the code: DELETE then verify is 410")
    func cancel() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let requestID = try await requestOTP(client, "+995511200300")
                let code = try await otpCode(db, phone: "+995511200300")
                let cancelled = try await call(client, .delete, "/auth/phone/otp/\(requestID)", path: "/auth/phone/otp/{request_id}")
                #expect(cancelled.status == .noContent)
                #expect(try await verifyOTP(client, requestID, code).status == .gone)
                #expect(
                    try await call(client, .delete, "/auth/phone/otp/\(requestID)", path: "/auth/phone/otp/{request_id}").status
                        == .noContent)
                #expect(
                    try await call(client, .delete, "/auth/phone/otp/\(UUID())", path: "/auth/phone/otp/{request_id}").status == .notFound)
                #expect(await db.codeEventTypes() == ["phone.otp_issued", "phone.otp_cancelled"])
                #expect(try await db.storedEventCount() == 2)
            }
        }
    }

    @Test("bad input: invalid numbers 422 invalid_phone, unknown purposes 422, signed-in purposes 401, odd codes 422")
    func badInput() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                for body: [String: Any] in [
                    ["phone": "+99551120030", "purpose": "sign_in"], ["phone": "51120030", "country": "GE", "purpose": "sign_in"],
                    ["phone": "hello", "purpose": "sign_in"], ["phone": "511200300", "country": "ZZ", "purpose": "sign_in"],
                ] {
                    let answer = try await call(client, .post, "/auth/phone/request-otp", body)
                    #expect(answer.status == .unprocessableContent)
                    #expect(answer.string("error") == "invalid_phone")
                    #expect(answer.string("message") == "Enter a valid phone number.")
                }
                let purpose = try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "party"])
                #expect(purpose.status == .unprocessableContent && purpose.problemCodes == ["invalid_purpose"])
                // Every rule broken, not only the first.
                let both = try await call(client, .post, "/auth/phone/request-otp", ["phone": "hello", "purpose": "party"])
                #expect(both.problemCodes == ["invalid_purpose", "invalid_phone"])
                #expect(
                    try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "add_phone"]).status
                        == .unauthorized)
                #expect(
                    try await call(client, .post, "/auth/phone/request-otp", ["phone": 995, "purpose": "sign_in"]).status == .badRequest)
                #expect(try await verifyOTP(client, "not-a-uuid", "123456").status == .gone)
                #expect(try await verifyOTP(client, UUID().uuidString, "12345x").status == .unprocessableContent)
                #expect(try await db.storedEventCount() == 0)
            }
        }
    }

    @Test("adding a number someone holds is 409 with the product copy and no hint; a free one shows on the hub")
    func addPhone() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                _ = try await phoneSignIn(client, db, "+995511200300")
                let access = try await signUp(client, email: "ana@example.com")
                let grant = try await emailLinkGrant(client, db, token: access)
                let taken = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "add_phone"], token: access,
                    reauth: grant)
                #expect(taken.status == .conflict)
                #expect(taken.string("error") == "phone_taken")
                #expect(taken.string("message") == "This number is already in use by another account.")
                #expect(Set(taken.body.keys) == ["error", "message"])
                let requestID = try await requestOTP(client, "+995 511 100 000", purpose: "add_phone", token: access, reauth: grant)
                let hub = try await verifyOTP(
                    client, requestID, try await otpCode(db, phone: "+995511100000"), token: access, reauth: grant)
                #expect(hub.status == .ok)
                #expect(hub.string("phone") == "+995511100000")
                #expect(hub.string("email") == "ana@example.com")
                let again = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "+995511100001", "purpose": "add_phone"], token: access,
                    reauth: grant)
                #expect(again.status == .conflict)
                #expect(again.string("error") == "phone_exists")
            }
        }
    }

    @Test("change phone needs a grant of this session; the old number is free afterwards")
    func changePhone() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let body: [String: Any] = ["phone": "+995511100000", "purpose": "change_phone"]
                let refused = try await call(client, .post, "/auth/phone/request-otp", body, token: access)
                #expect(refused.status == .forbidden)
                #expect(refused.string("error") == "reauth_required")
                let grant = try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access)
                #expect(grant.status == .ok)
                let reauth = try #require(grant.string("reauth_token"))
                // Another session of the same account cannot use this session's grant.
                let other = try await signIn(client, email: "ana@example.com")
                #expect(try await call(client, .post, "/auth/phone/request-otp", body, token: other, reauth: reauth).status == .forbidden)
                let requestID = try await requestOTP(client, "+995511100000", purpose: "change_phone", token: access, reauth: reauth)
                let code = try await otpCode(db, phone: "+995511100000")
                // Checked again at verify.
                #expect(try await verifyOTP(client, requestID, code, token: access).status == .forbidden)
                let hub = try await verifyOTP(client, requestID, code, token: access, reauth: reauth)
                #expect(hub.status == .ok)
                #expect(hub.string("phone") == "+995511100000")
                // The old number can start a new account now.
                let newcomer = try await phoneSignIn(client, db, "+995511200300")
                var phones: [String?] = []
                for token in [access, newcomer] {
                    let accountID = try #require(
                        try await call(client, .get, "/me", token: token).string("account_id").flatMap(UUID.init(uuidString:)))
                    phones.append(try await db.state(of: accountID).phone)
                }
                #expect(phones == ["+995511100000", "+995511200300"])
            }
        }
    }

    @Test("a phone-only account changes its number with the session alone (last method)")
    func lastMethod() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await phoneSignIn(client, db, "+995511200300")
                let options = try await call(client, .get, "/me/reauth-options?action=change_phone", token: access)
                #expect(options.body["methods"] as? [String] == [])
                #expect(options.body["last_method"] as? Bool == true)
                let requestID = try await requestOTP(client, "+995511100000", purpose: "change_phone", token: access)
                let hub = try await verifyOTP(client, requestID, try await otpCode(db, phone: "+995511100000"), token: access)
                #expect(hub.status == .ok)
                #expect(hub.string("phone") == "+995511100000")
            }
        }
    }

    @Test("one signed-in account may request 10 codes per 15 minutes, all numbers together")
    func accountCap() async throws {
        try await MemoryBackend.with { db in
            try await app(db) { $0.policies.otp.accountLimit = 2 }.test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let grant = try await emailLinkGrant(client, db, token: access)
                _ = try await requestOTP(client, "+995511200300", purpose: "add_phone", token: access, reauth: grant)
                _ = try await requestOTP(client, "+995511200301", purpose: "add_phone", token: access, reauth: grant)
                let capped = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "+995511200302", "purpose": "add_phone"], token: access,
                    reauth: grant)
                #expect(capped.status == .tooManyRequests)
                #expect(capped.body["retry_after"] as? Int == 900)
                // Another account is not affected.
                let other = try await signUp(client, email: "bo@example.com")
                let otherGrant = try await emailLinkGrant(client, db, token: other)
                _ = try await requestOTP(client, "+995511200302", purpose: "add_phone", token: other, reauth: otherGrant)
            }
        }
    }

    @Test("one client address may request 30 codes per 15 minutes, all numbers together")
    func addressCap() async throws {
        try await MemoryBackend.with { db in
            let app = try app(db) {
                $0.policies.otp.addressLimit = 3
                $0.trustedProxies = ["127.0.0.1/32", "::1/128"]
            }
            try await app.test(.live) { client in
                func ask(_ phone: String, from address: String) async throws -> Answer {
                    try await client.execute(
                        uri: "/auth/phone/request-otp", method: .post,
                        headers: [.contentType: "application/json", HTTPField.Name("X-Forwarded-For")!: address],
                        body: jsonBody(["phone": phone, "purpose": "sign_in"])
                    ) { response in
                        Answer(status: response.status, body: try json(response), headers: response.headers)
                    }
                }
                for index in 0..<3 {
                    #expect(try await ask("+99551120030\(index)", from: "203.0.113.7").status == .accepted)
                }
                let capped = try await ask("+995511200309", from: "203.0.113.7")
                #expect(capped.status == .tooManyRequests)
                #expect(capped.body["retry_after"] as? Int == 900)
                #expect(try await ask("+995511200309", from: "203.0.113.8").status == .accepted)
            }
        }
    }
}
