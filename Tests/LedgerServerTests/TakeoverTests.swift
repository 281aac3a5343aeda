import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

/// The account-takeover paths of the README's "Security model" table, each tried as an
/// attacker would over HTTP (the decision rules have pure `decide` tests in LedgerIdentityTests).
@Suite("HTTP: account-takeover paths", .timeLimit(.minutes(10)))
struct TakeoverTests {
    func app(_ db: TestDatabase, configure: (inout LedgerConfiguration) -> Void = { _ in }) throws -> some ApplicationProtocol {
        try testApplication(db, behindProxy: false, configure: configure)
    }

    @Test("a stolen session cannot add its own number: add_phone needs a grant at request and again at verify")
    func addPhoneThenReauth() async throws {
        try await TestPostgres.withDatabase { db in
            try await app(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let body: [String: Any] = ["phone": "+995511100000", "purpose": "add_phone"]
                let refused = try await call(client, .post, "/auth/phone/request-otp", body, token: access)
                #expect(refused.status == .forbidden)
                #expect(refused.string("error") == "reauth_required")
                #expect(try await db.client.query("SELECT count(*) FROM outbox WHERE template = 'otp'")[0].int(0) == 0)
                // A grant at request time does not carry over to a verify that leaves it out.
                let grant = try await emailLinkGrant(client, db, token: access)
                let requestID = try await requestOTP(client, "+995511100000", purpose: "add_phone", token: access, reauth: grant)
                let code = try await otpCode(db, phone: "+995511100000")
                let bare = try await verifyOTP(client, requestID, code, token: access)
                #expect(bare.status == .forbidden)
                #expect(bare.string("error") == "reauth_required")
                let added = try await verifyOTP(client, requestID, code, token: access, reauth: grant)
                #expect(added.status == .ok)
                #expect(added.string("phone") == "+995511100000")
            }
        }
    }

    @Test("whoever squats an unverified address: its password is no option, and no grant, for adding a method")
    func unverifiedEmailSquatting() async throws {
        try await TestPostgres.withDatabase { db in
            try await app(db).test(.router) { client in
                let squatter = try await signUp(client, email: "victim@example.com")
                let options = try await call(client, .get, "/me/reauth-options?action=add_method", token: squatter)
                #expect(options.body["methods"] as? [String] == ["email_link"])
                #expect(options.body["last_method"] as? Bool == false)
                let grant = try await passwordGrant(client, token: squatter)
                let phone = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "+995511100000", "purpose": "add_phone"], token: squatter,
                    reauth: grant)
                #expect(phone.status == .forbidden)
                #expect(phone.string("error") == "reauth_required")
                // Only the address's owner can pass by the emailed link, which also verifies it.
                let linkGrant = try await emailLinkGrant(client, db, token: squatter)
                #expect(try await call(client, .get, "/me", token: squatter).body["email_verified"] as? Bool == true)
                _ = try await requestOTP(client, "+995511100000", purpose: "add_phone", token: squatter, reauth: linkGrant)
                let verified = try await db.client.query("SELECT count(*) FROM events WHERE event_type = 'email.verified'")
                #expect(try verified[0].int(0) == 1)
            }
        }
    }

    @Test("40 concurrent wrong passwords: at most LEDGER_LOGIN_MAX_FAILURES are evaluated, at sign-in and at re-auth")
    func concurrentGuesses() async throws {
        try await TestPostgres.withDatabase { db in
            try await app(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                /// 40 wrong passwords at once, to sign-in (no token) or to re-auth.
                func burst(_ path: String, token: String?) async throws -> [HTTPResponse.Status] {
                    try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                        for _ in 0..<40 {
                            group.addTask {
                                let body: [String: Any] =
                                    token == nil
                                    ? ["email": "ana@example.com", "password": "wrong-password-1"] : ["password": "wrong-password-1"]
                                return try await call(client, .post, path, body, token: token).status
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                let signIns = try await burst("/auth/email/login", token: nil)
                #expect(signIns.filter { $0 == .unauthorized }.count == 5)
                #expect(signIns.filter { $0 == .tooManyRequests }.count == 35)
                // Each evaluated failure is an event; the fifth also locks.
                let failed = try await db.client.query("SELECT count(*) FROM events WHERE event_type = 'login.failed'")
                #expect(try failed[0].int(0) == 5)
                let throttled = try await db.client.query("SELECT count(*) FROM events WHERE event_type = 'login.throttled'")
                #expect(try throttled[0].int(0) == 1)
                // Even the right password waits out the lockout.
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"]).status
                        == .tooManyRequests)

                let reauths = try await burst("/auth/reauth/password", token: access)
                #expect(reauths.filter { $0 == .unauthorized }.count == 5)
                #expect(reauths.filter { $0 == .tooManyRequests }.count == 35)
                let reauthFailed = try await db.client.query("SELECT count(*) FROM events WHERE event_type = 'reauth.failed'")
                #expect(try reauthFailed[0].int(0) == 5)
                // Both lockouts end with their window.
                db.clock.advance(by: 900)
                let again = try await logIn(client, email: "ana@example.com")
                #expect(
                    try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: again).status == .ok)
            }
        }
    }

    @Test("20 wrong codes per number in 24 hours, all codes together: then code requests and entries for it are 429")
    func dailyCodeCap() async throws {
        try await TestPostgres.withDatabase { db in
            try await app(db).test(.router) { client in
                let phone = "+995511200300"
                let start = db.clock.now()
                func wrongCodes(_ count: Int) async throws {
                    let requestID = try await requestOTP(client, phone)
                    let code = try await otpCode(db, phone: phone)
                    for _ in 0..<count { _ = try await verifyOTP(client, requestID, wrongCode(code)) }
                }
                // 19 wrong codes over four codes (the first send and its three resends).
                for count in [5, 5, 5, 4] {
                    try await wrongCodes(count)
                    db.clock.advance(by: 30)
                }
                db.clock.advance(by: 901 - 120)
                // 19: still allowed; the 20th wrong code reaches the cap.
                let lastRequest = try await requestOTP(client, phone)
                let lastCode = try await otpCode(db, phone: phone)
                #expect(try await verifyOTP(client, lastRequest, wrongCode(lastCode)).status == .unauthorized)
                // The open code has attempts left, but the number has none: not even the right
                // code is compared.
                for presented in [wrongCode(lastCode), lastCode] {
                    let refused = try await verifyOTP(client, lastRequest, presented)
                    #expect(refused.status == .tooManyRequests && refused.string("error") == "rate_limited")
                }
                db.clock.advance(by: 30)
                let capped = try await call(client, .post, "/auth/phone/request-otp", ["phone": phone, "purpose": "sign_in"])
                #expect(capped.status == .tooManyRequests)
                #expect(capped.string("error") == "rate_limited")
                // Free again when the first code's five leave the window: 24 hours after it was sent.
                let elapsed = Int(db.clock.now().timeIntervalSince(start))
                #expect(capped.body["retry_after"] as? Int == 86_400 - elapsed)
                #expect(capped.headers[.retryAfter] == String(86_400 - elapsed))
                // Another number is not affected.
                _ = try await requestOTP(client, "+995511200301")
                db.clock.advance(by: TimeInterval(86_400 - elapsed))
                _ = try await requestOTP(client, phone)
            }
        }
    }

    @Test("a sign-in code requested before the account's deletion ends with it: no account inside the cooldown")
    func codeAfterDeletion() async throws {
        try await TestPostgres.withDatabase { db in
            try await app(db).test(.router) { client in
                let phone = "+995511200300"
                let access = try await phoneSignIn(client, db, phone)
                db.clock.advance(by: 30)
                // The code an attacker (or the person) asked for, still open at deletion.
                let pending = try await requestOTP(client, phone)
                let pendingCode = try await otpCode(db, phone: phone)
                let grant = try await phoneGrant(client, db, token: access, phone: phone)
                #expect(try await call(client, .delete, "/me", token: access, reauth: grant).status == .accepted)
                let late = try await verifyOTP(client, pending, pendingCode)
                #expect(late.status == .gone)
                #expect(late.string("error") == "code_expired")
                let accounts = try await db.client.query("SELECT count(*) FROM accounts")
                #expect(try accounts[0].int(0) == 1)
                let invalidated = try await db.client.query("SELECT count(*) FROM otp_requests WHERE closed_at IS NULL")
                #expect(try invalidated[0].int(0) == 0)
            }
        }
    }

    @Test("a deleted account's pending verification and email-change links are expired; the new address stays free")
    func linksAfterDeletion() async throws {
        try await TestPostgres.withDatabase { db in
            try await app(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let verification = try await outboxToken(db, template: "verify_email")
                let grant = try await passwordGrant(client, token: access)
                #expect(
                    try await call(
                        client, .post, "/auth/email/request-change", ["new_email": "ana.new@example.com"], token: access, reauth: grant
                    ).status == .accepted)
                let change = try #require(try await outboxMessage(db, template: "email_change_confirm").token)
                #expect(try await call(client, .post, "/auth/reauth/email-link", token: access).status == .accepted)
                let reauthLink = try await outboxToken(db, template: "reauth_link")
                #expect(try await call(client, .delete, "/me", token: access, reauth: grant).status == .accepted)
                for (path, token) in [
                    ("/auth/email/verify", verification), ("/auth/email/confirm-change", change),
                    ("/auth/reauth/email-link/confirm", reauthLink),
                ] {
                    let answer = try await call(client, .post, path, ["token": token])
                    #expect(answer.status == .gone, "\(path)")
                    #expect(answer.string("error") == "link_expired")
                }
                let unused = try await db.client.query("SELECT count(*) FROM email_links WHERE used_at IS NULL")
                #expect(try unused[0].int(0) == 0)
                // The address the change named was never claimed: it signs up at once.
                _ = try await signUp(client, email: "ana.new@example.com")
            }
        }
    }

    @Test("a sign-up racing the deletion of the same email never gets through the cooldown")
    func signUpRacingDeletion() async throws {
        try await TestPostgres.withDatabase { db in
            try await app(db).test(.router) { client in
                var outcomes: [HTTPResponse.Status: Int] = [:]
                for round in 0..<12 {
                    let email = "race\(round)@example.com"
                    let access = try await signUp(client, email: email)
                    // Proven by its link: a deletion holds back only a verified address.
                    let grant = try await emailLinkGrant(client, db, token: access)
                    let (deletion, signUp) = try await withThrowingTaskGroup(of: (Bool, HTTPResponse.Status).self) { group in
                        group.addTask { (true, try await call(client, .delete, "/me", token: access, reauth: grant).status) }
                        group.addTask {
                            (
                                false,
                                try await call(client, .post, "/auth/email/signup", ["email": email, "password": "copper-lantern-77"])
                                    .status
                            )
                        }
                        var deletion = HTTPResponse.Status.ok
                        var signUp = HTTPResponse.Status.ok
                        for try await (isDeletion, status) in group {
                            if isDeletion { deletion = status } else { signUp = status }
                        }
                        return (deletion, signUp)
                    }
                    #expect(deletion == .accepted)
                    #expect(signUp == .conflict, "round \(round): a second account took \(email) inside the cooldown")
                    outcomes[signUp, default: 0] += 1
                }
                // Every live account is one of the rounds' (deleted) ones: no second owner of any address.
                let live = try await db.client.query("SELECT count(*) FROM accounts WHERE deleted_at IS NULL")
                #expect(try live[0].int(0) == 0)
            }
        }
    }
}
