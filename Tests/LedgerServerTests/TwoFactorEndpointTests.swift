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
import LedgerWorkers
import Testing

@Suite("HTTP: two-factor authentication", .timeLimit(.minutes(10)))
struct TwoFactorEndpointTests {
    typealias Providers = ProviderEndpointTests.Providers<MemoryBackend>

    func withApp(
        configure: @escaping @Sendable (inout LedgerConfiguration) -> Void = Self.manyFailures,
        _ body: @escaping @Sendable (any TestClientProtocol, Providers) async throws -> Void
    ) async throws {
        try await MemoryBackend.with { db in
            let providers = try await Providers.make(db)
            let services = try db.dependencies {
                providers.trust(&$0)
                configure(&$0)
            }
            try await Application(router: buildRouter(services)).test(.router) { client in
                try await body(client, providers)
            }
        }
    }

    /// Sign-in failures that never lock the password (the suite's default).
    static let manyFailures: @Sendable (inout LedgerConfiguration) -> Void = { $0.policies.loginMaxFailures = 50 }

    /// The authenticator app: the code of now (or `steps` later).
    func code(_ base32: String, _ db: some TestBackend, steps: Int64 = 0) throws -> String {
        let secret = try #require(TOTPCodes.secret(fromBase32: base32))
        return TOTPCodes.code(secret, step: TOTPCodes.step(at: db.clock.now()) + steps)
    }

    /// Turns TOTP on with `grant`; the base32 secret and the recovery codes.
    func enrol(_ client: some TestClientProtocol, _ db: some TestBackend, token access: String, grant: String) async throws
        -> (secret: String, recovery: [String])
    {
        let begun = try await call(client, .post, "/me/mfa/totp", token: access, reauth: grant)
        #expect(begun.status == .ok)
        let secret = try #require(begun.string("secret"))
        #expect(begun.string("otpauth_uri")?.hasPrefix("otpauth://totp/") == true)
        let confirmed = try await call(client, .post, "/me/mfa/totp/confirm", ["code": try code(secret, db)], token: access)
        #expect(confirmed.status == .ok)
        return (secret, confirmed.body["recovery_codes"] as? [String] ?? [])
    }

    /// An email account signed up and re-authenticated by its email link, with TOTP on: its
    /// access token and the base32 secret.
    func signUpWithTOTP(_ client: some TestClientProtocol, _ db: some TestBackend, email: String) async throws
        -> (access: String, secret: String)
    {
        let access = try await signUp(client, email: email)
        return (access, try await enrol(client, db, token: access, grant: try await emailLinkGrant(client, db, token: access)).secret)
    }

    /// A day of 5 wrong TOTP codes, beneath a 15-minute lockout that never intervenes.
    static let fiveADay: @Sendable (inout LedgerConfiguration) -> Void = {
        $0.policies.loginMaxFailures = 50
        $0.policies.mfaDailyFailureLimit = 5
    }

    func mfaToken(_ answer: Answer, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        #expect(answer.status == .ok && answer.body["mfa_required"] as? Bool == true, sourceLocation: sourceLocation)
        #expect(answer.body["access_token"] == nil && answer.body["methods"] as? [String] == ["totp", "recovery_code"])
        return try #require(answer.string("mfa_token"), sourceLocation: sourceLocation)
    }

    func verify(_ client: some TestClientProtocol, _ token: String, code: String? = nil, recovery: String? = nil) async throws -> Answer {
        var body: [String: Any] = ["mfa_token": token]
        if let code { body["code"] = code }
        if let recovery { body["recovery_code"] = recovery }
        return try await call(client, .post, "/auth/mfa/verify", body)
    }

    @Test(
        "enrolment takes re-auth and a first code; then a password sign-in steps up: a code of a new step once, a recovery code once, never a replay"
    )
    func passwordStepUp() async throws {
        try await withApp { client, providers in
            let db = providers.db
            let access = try await signUp(client, email: "ana@example.com")
            // Without a grant, 403 first (as every sensitive call), whatever else stands in the way.
            let bare = try await call(client, .post, "/me/mfa/totp", token: access)
            #expect(bare.status == .forbidden && bare.string("error") == "reauth_required")
            let unverified = try await call(
                client, .post, "/me/mfa/totp", token: access, reauth: try await passwordGrant(client, token: access))
            // A password grant proves nothing about an unverified address: it cannot add a factor either.
            #expect(unverified.status == .forbidden && unverified.string("error") == "reauth_required")
            let grant = try await emailLinkGrant(client, db, token: access)
            let refused = try await call(client, .post, "/me/mfa/totp", token: access)
            #expect(refused.status == .forbidden && refused.string("error") == "reauth_required")
            let begun = try await call(client, .post, "/me/mfa/totp", token: access, reauth: grant)
            let secret = try #require(begun.string("secret"))
            let stale = try await call(client, .post, "/me/mfa/totp/confirm", ["code": try code(secret, db, steps: -3)], token: access)
            #expect(stale.status == .unauthorized && stale.string("error") == "incorrect_code")
            let confirmed = try await call(client, .post, "/me/mfa/totp/confirm", ["code": try code(secret, db)], token: access)
            let recovery = try #require(confirmed.body["recovery_codes"] as? [String])
            #expect(recovery.count == 10)
            let hub = try await call(client, .get, "/me/auth-methods", token: access)
            #expect((hub.body["mfa"] as? [String: Any])?["totp"] as? Bool == true)
            #expect((hub.body["mfa"] as? [String: Any])?["recovery_codes_left"] as? Int == 10)
            #expect(try await call(client, .post, "/me/mfa/totp", token: access, reauth: grant).string("error") == "mfa_already_enabled")

            let login = ["email": "ana@example.com", "password": "violet-harbor-91"]
            let first = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            // The confirmation spent this step's code.
            let replay = try await verify(client, first, code: try code(secret, db))
            #expect(replay.status == .unauthorized && replay.body["attempts_remaining"] as? Int == 4)
            db.clock.advance(by: 30)
            let fresh = try code(secret, db)
            let signedIn = try await verify(client, first, code: fresh)
            #expect(signedIn.status == .ok && signedIn.string("access_token") != nil)
            #expect(try await verify(client, first, code: fresh).status == .gone)  // the challenge is over
            let second = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            #expect(try await verify(client, second, code: fresh).status == .unauthorized)
            #expect(try await verify(client, second, recovery: recovery[0].uppercased()).status == .ok)
            let third = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            #expect(try await verify(client, third, recovery: recovery[0]).status == .unauthorized)
            let left = try await call(client, .get, "/me/auth-methods", token: access)
            #expect((left.body["mfa"] as? [String: Any])?["recovery_codes_left"] as? Int == 9)
            // New codes void the old ones.
            let renewed = try await call(client, .post, "/me/mfa/recovery-codes", token: access, reauth: grant)
            #expect((renewed.body["recovery_codes"] as? [String])?.count == 10)
            #expect(try await verify(client, third, recovery: recovery[1]).status == .unauthorized)
        }
    }

    @Test("turning TOTP on, new recovery codes and turning it off each tell the verified address, with nothing of the secret or the codes")
    func changesAlertTheOwner() async throws {
        try await withApp { client, providers in
            let db = providers.db
            let access = try await signUp(client, email: "fay@example.com")
            let grant = try await emailLinkGrant(client, db, token: access)
            func alerts() async throws -> [[String: String]] { try await Self.alerts(db, template: "two_factor_changed") }
            _ = try await call(client, .post, "/me/mfa/totp", token: access, reauth: grant)
            #expect(try await alerts().isEmpty)  // begun, not on yet
            #expect(try await call(client, .delete, "/me/mfa/totp", token: access, reauth: grant).status == .ok)
            #expect(try await alerts().isEmpty)  // cancelled before it was on: nothing turned off
            let (secret, recovery) = try await enrol(client, db, token: access, grant: grant)
            let renewed = try await call(client, .post, "/me/mfa/recovery-codes", token: access, reauth: grant)
            let newCodes = try #require(renewed.body["recovery_codes"] as? [String])
            #expect(try await call(client, .delete, "/me/mfa/totp", token: access, reauth: grant).status == .ok)
            let sent = try await alerts()
            #expect(sent.map { $0["change"] } == ["enabled", "recovery_codes_regenerated", "disabled"])
            #expect(sent.allSatisfy { $0["to"] == "fay@example.com" && $0["changed_at"] == RFC3339.format(db.clock.now()) })
            #expect(sent.allSatisfy { $0["secure_account"]?.contains("change your password") == true })
            let everything = try await db.queuedMessages(template: "two_factor_changed").map { "\($0)" }.joined(separator: " ")
            #expect(!everything.contains(secret) && !(recovery + newCodes).contains { everything.contains($0) })
        }
    }

    @Test("five wrong codes end the mfa_token (410), and so do 5 minutes")
    func challengeEnds() async throws {
        try await withApp { client, providers in
            let db = providers.db
            let (_, secret) = try await signUpWithTOTP(client, db, email: "bo@example.com")
            db.clock.advance(by: 30)
            let login = ["email": "bo@example.com", "password": "violet-harbor-91"]
            let token = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            for left in [4, 3, 2, 1] {
                let wrong = try await verify(client, token, code: try code(secret, db, steps: 5))
                #expect(wrong.status == .unauthorized && wrong.body["attempts_remaining"] as? Int == left)
                #expect(wrong.string("message") == "Code is incorrect. Try again.")
            }
            let fifth = try await verify(client, token, code: try code(secret, db, steps: 5))
            #expect(fifth.status == .gone && fifth.string("error") == "mfa_expired")
            #expect(try await verify(client, token, code: try code(secret, db)).status == .gone)
            let late = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            db.clock.advance(by: 301)
            #expect(try await verify(client, late, code: try code(secret, db)).status == .gone)
            #expect(try await verify(client, "mfa_garbage", code: "123456").status == .gone)
        }
    }

    @Test(
        "wrong codes at sign-in spend the challenge and the day, not the owner's other ways in: a recovery code and the owner's password re-auth still work"
    )
    func throttled() async throws {
        let defaults: @Sendable (inout LedgerConfiguration) -> Void = { _ in }
        try await withApp(configure: defaults) { client, providers in
            let db = providers.db
            let access = try await signUp(client, email: "cy@example.com")
            let (secret, recovery) = try await enrol(client, db, token: access, grant: try await emailLinkGrant(client, db, token: access))
            db.clock.advance(by: 30)
            let login = ["email": "cy@example.com", "password": "violet-harbor-91"]
            let wrong = try code(secret, db, steps: 7)
            // Whoever knows the password: five wrong codes end a challenge, and five wrong
            // recovery codes another, twice over: twenty wrong answers spend the day.
            for _ in 0..<2 {
                let token = try mfaToken(try await call(client, .post, "/auth/email/login", login))
                var statuses: [Int] = []
                for _ in 0..<5 { statuses.append(Int(try await verify(client, token, code: wrong).status.code)) }
                #expect(statuses == [401, 401, 401, 401, 410])
                let other = try mfaToken(try await call(client, .post, "/auth/email/login", login))
                statuses = []
                for _ in 0..<5 { statuses.append(Int(try await verify(client, other, recovery: "aaaa-bbbb-cccc").status.code)) }
                #expect(statuses == [401, 401, 401, 401, 410])
            }
            // TOTP codes are refused for the day, and the owner is told; wrong recovery codes
            // counted too (the twentieth answer was one).
            let next = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            #expect(try await verify(client, next, code: try code(secret, db)).status == .tooManyRequests)
            #expect(try await limitAlerts(db).map { $0["during"] } == ["sign_in"])
            // The owner still re-authenticates in their session, and signs in with a recovery code.
            #expect(try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access).status == .ok)
            #expect(try await verify(client, next, recovery: recovery[0]).status == .ok)
        }
    }

    @Test(
        "20 wrong TOTP codes at sign-in in a day stop TOTP sign-ins until the day ends, however they are spread; a recovery code still works"
    )
    func dailyCap() async throws {
        let defaults: @Sendable (inout LedgerConfiguration) -> Void = { _ in }
        try await withApp(configure: defaults) { client, providers in
            let db = providers.db
            let access = try await signUp(client, email: "di@example.com")
            let (secret, recovery) = try await enrol(client, db, token: access, grant: try await emailLinkGrant(client, db, token: access))
            let started = db.clock.now()
            let login = ["email": "di@example.com", "password": "violet-harbor-91"]
            // Four rounds of five wrong codes, each a quarter of an hour apart.
            for _ in 0..<4 {
                db.clock.advance(by: 901)
                let token = try mfaToken(try await call(client, .post, "/auth/email/login", login))
                for _ in 0..<5 { #expect(try await verify(client, token, code: try code(secret, db, steps: 7)).status != .ok) }
            }
            db.clock.advance(by: 901)
            let token = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            let capped = try await verify(client, token, code: try code(secret, db))
            #expect(capped.status == .tooManyRequests && capped.string("error") == "too_many_attempts")
            // Locked a day from the 20th wrong code, which came 4 × 901 s after the start.
            let lockEnds = started.addingTimeInterval(4 * 901 + 86_400)
            #expect(capped.body["retry_after"] as? Int == Int(lockEnds.timeIntervalSince(db.clock.now())))
            // The 20th wrong code told the owner, once: whoever sent them holds the password.
            let reachedAt = RFC3339.format(started.addingTimeInterval(4 * 901))
            #expect(
                try await limitAlerts(db) == [
                    [
                        "to": "di@example.com", "paused_until": RFC3339.format(lockEnds), "reached_at": reachedAt,
                        "during": "sign_in", "secure_account": ImpliedMessages.secureAccountAdvice,
                    ]
                ])
            #expect(try await Self.limitEvents(db) == 1)
            // The owner's recovery codes are not capped by the day: a guesser cannot close that way in.
            #expect(try await verify(client, token, recovery: recovery[0]).string("access_token") != nil)
            db.clock.advance(by: lockEnds.timeIntervalSince(db.clock.now()) + 1)
            let next = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            #expect(try await verify(client, next, code: try code(secret, db)).string("access_token") != nil)
        }
    }

    /// The alerts of `template` queued, in order, each as its details and its recipient (`to`).
    static func alerts(_ db: some TestBackend, template: String) async throws -> [[String: String]] {
        try await db.queuedMessages(template: template).compactMap { message in
            var details = message.details
            details?["to"] = message.to
            return details
        }
    }

    func limitAlerts(_ db: some TestBackend) async throws -> [[String: String]] {
        try await Self.alerts(db, template: "two_factor_limit_reached")
    }

    /// How many times a day's limit of second-factor attempts was reached (`mfa.daily_limit_reached`).
    static func limitEvents(_ db: some TestBackend) async throws -> Int {
        try await db.storedEventCount(type: "mfa.daily_limit_reached")
    }

    @Test("wrong TOTP re-auths spend their session's day, not the owner's sign-ins; a purge deletes the account's counters")
    func dailyCapPerSession() async throws {
        try await withApp(configure: Self.fiveADay) { client, providers in
            let db = providers.db
            let (access, secret) = try await signUpWithTOTP(client, db, email: "ed@example.com")
            db.clock.advance(by: 30)
            for _ in 0..<5 {
                let wrong = try await call(client, .post, "/auth/reauth/totp", ["code": try code(secret, db, steps: 7)], token: access)
                #expect(wrong.status == .unauthorized)
            }
            let right = try await call(client, .post, "/auth/reauth/totp", ["code": try code(secret, db)], token: access)
            #expect(right.status == .tooManyRequests && right.body["retry_after"] as? Int == 86_400)
            // The owner still signs in, and the new session has a day of its own.
            let login = ["email": "ed@example.com", "password": "violet-harbor-91"]
            let token = try mfaToken(try await call(client, .post, "/auth/email/login", login))
            let session = try await verify(client, token, code: try code(secret, db))
            let fresh = try #require(session.string("access_token"))
            db.clock.advance(by: 30)
            #expect(try await call(client, .post, "/auth/reauth/totp", ["code": try code(secret, db)], token: fresh).status == .ok)
            // That the counters named after the account go with a purge: AtRestTests.countersPurged.
        }
    }

    @Test("every sign-in method steps up: Apple, Google, a phone code; a link_token sign-in links its identity after the second factor")
    func everyMethod() async throws {
        try await withApp { client, providers in
            let db = providers.db
            let access = try #require(
                try await call(
                    client, .post, "/auth/apple",
                    ["id_token": try await providers.appleToken("a-2fa", email: "di@example.com", verified: true)]
                ).string("access_token"))
            let appleGrant = try await providers.grant(client, "apple", "a-2fa", token: access)
            _ = try await call(
                client, .post, "/me/auth-methods/link", ["provider": "google", "id_token": try await providers.googleToken("g-2fa")],
                token: access, reauth: appleGrant)
            let requestID = try await requestOTP(client, "+995511200777", purpose: "add_phone", token: access, reauth: appleGrant)
            #expect(
                try await verifyOTP(client, requestID, try await otpCode(db, phone: "+995511200777"), token: access, reauth: appleGrant)
                    .status
                    == .ok)
            let (secret, _) = try await enrol(client, db, token: access, grant: appleGrant)

            _ = try mfaToken(try await call(client, .post, "/auth/apple", ["id_token": try await providers.appleToken("a-2fa")]))
            _ = try mfaToken(try await call(client, .post, "/auth/google", ["id_token": try await providers.googleToken("g-2fa")]))
            let phoneRequest = try await requestOTP(client, "+995511200777")
            _ = try mfaToken(try await verifyOTP(client, phoneRequest, try await otpCode(db, phone: "+995511200777")))

            // An account with a second factor is never joined by email on a provider's word:
            // link_required, then the password sign-in with the link_token steps up, and the link
            // happens after the second factor.
            let dana = try await signUp(client, email: "dana@example.org")
            let (danaSecret, _) = try await enrol(client, db, token: dana, grant: try await emailLinkGrant(client, db, token: dana))
            let required = try await call(
                client, .post, "/auth/google",
                ["id_token": try await providers.googleToken("g-dana", email: "dana@example.org", verified: true)])
            let linkToken = try #require(required.string("link_token"))
            let token = try mfaToken(
                try await call(
                    client, .post, "/auth/email/login",
                    ["email": "dana@example.org", "password": "violet-harbor-91", "link_token": linkToken]))
            #expect(try await call(client, .get, "/me/auth-methods", token: dana).body["google_linked"] as? Bool == false)
            #expect(try await verify(client, token).status == .unprocessableContent)  // neither a code nor a recovery code
            db.clock.advance(by: 30)
            let signedIn = try await verify(client, token, code: try code(danaSecret, db))
            #expect(signedIn.status == .ok)
            let fresh = try #require(signedIn.string("access_token"))
            #expect(try await call(client, .get, "/me/auth-methods", token: fresh).body["google_linked"] as? Bool == true)
            _ = secret
        }
    }

    @Test(
        "re-auth by TOTP: offered once on, a fresh code grants, the same code again does not; off again, sign-ins need one factor; a purge leaves no secret"
    )
    func reauthDisableAndPurge() async throws {
        try await withApp { client, providers in
            let db = providers.db
            let access = try await signUp(client, email: "eve@example.com")
            let grant = try await emailLinkGrant(client, db, token: access)
            let (secret, _) = try await enrol(client, db, token: access, grant: grant)
            let options = try await call(client, .get, "/me/reauth-options?action=manage_mfa", token: access)
            #expect((options.body["methods"] as? [String])?.contains("totp") == true)
            db.clock.advance(by: 30)
            let fresh = try code(secret, db)
            let granted = try await call(client, .post, "/auth/reauth/totp", ["code": fresh], token: access)
            #expect(granted.status == .ok)
            let totpGrant = try #require(granted.string("reauth_token"))
            let again = try await call(client, .post, "/auth/reauth/totp", ["code": fresh], token: access)
            #expect(again.status == .unauthorized && again.string("error") == "incorrect_code")
            #expect(try await call(client, .delete, "/me/mfa/totp", token: access).status == .forbidden)
            let off = try await call(client, .delete, "/me/mfa/totp", token: access, reauth: totpGrant)
            #expect(off.status == .ok && (off.body["mfa"] as? [String: Any])?["totp"] as? Bool == false)
            let login = try await call(client, .post, "/auth/email/login", ["email": "eve@example.com", "password": "violet-harbor-91"])
            #expect(login.string("access_token") != nil)
            #expect(
                try await call(client, .post, "/auth/reauth/totp", ["code": try code(secret, db)], token: access).status == .unauthorized)
            // That the secret is never stored in the clear, and unreadable after a purge: AtRestTests.totpSecretSealed.
        }
    }

}
