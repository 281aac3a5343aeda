import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import Testing

@Suite("HTTP: disabling and enabling accounts", .timeLimit(.minutes(10)))
struct AccountAdminEndpointTests {
    @Test("accounts:admin disables: sessions end, introspection says inactive, sign-ins are 403 account_disabled; enable undoes it")
    func disableAndEnable() async throws {
        try await MemoryBackend.with { db in
            let admin = try await db.apiKeys.create(name: "support", scopes: [.accountsAdmin]).key
            let holds = try await db.apiKeys.create(name: "bookings", scopes: [.holdsWrite]).key
            let introspector = try await db.apiKeys.create(name: "backend", scopes: [.sessionsIntrospect]).key
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                func post(_ action: String, _ body: [String: Any]? = nil, key: String? = nil, id: String? = nil) async throws
                    -> Answer
                {
                    try await call(
                        client, .post, "/accounts/\(id ?? accountID)/\(action)", body, token: key ?? admin, path: "/accounts/{id}/\(action)"
                    )
                }
                #expect(try await post("disable", ["reason": "chargeback"], key: holds).status == .forbidden)
                #expect(try await post("disable", ["reason": "chargeback"], key: "lk_wrong").status == .unauthorized)
                #expect(try await post("disable", ["reason": "  "]).problemCodes == ["invalid_reason"])
                #expect(try await post("disable", ["why": "chargeback"]).status == .badRequest)
                #expect(try await post("disable", ["reason": "x"], id: UUID().uuidString.lowercased()).status == .notFound)

                let disabled = try await post("disable", ["reason": "chargeback"])
                #expect(disabled.status == .ok && disabled.body["disabled"] as? Bool == true && disabled.string("reason") == "chargeback")
                #expect(try await call(client, .get, "/me", token: access).status == .unauthorized)
                let introspected = try await call(client, .post, "/sessions/introspect", ["token": access], token: introspector)
                #expect(introspected.body["active"] as? Bool == false)
                let login = try await call(
                    client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"])
                #expect(login.status == .forbidden && login.string("error") == "account_disabled")
                #expect(login.string("message") == "This account is disabled. Contact support.")
                let wrong = try await call(
                    client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "copper-lantern-77"])
                #expect(wrong.status == .unauthorized)

                // That its event names the key, and auditors see it disabled: AuditTrailTests.disableRecorded.
                let enabled = try await post("enable")
                #expect(enabled.status == .ok && enabled.body["disabled"] as? Bool == false)
                #expect(try await logIn(client, email: "ana@example.com") != "")
            }
        }
    }

    @Test("a phone code for a disabled account signs nobody in: 403 account_disabled, and the account stays disabled")
    func phoneSignInRefused() async throws {
        try await MemoryBackend.with { db in
            let admin = try await db.apiKeys.create(name: "support", scopes: [.accountsAdmin]).key
            try await testApplication(db).test(.router) { client in
                let access = try await phoneSignIn(client, db, "+995511200301")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let disabled = try await call(
                    client, .post, "/accounts/\(accountID)/disable", ["reason": "stolen phone"], token: admin,
                    path: "/accounts/{id}/disable")
                #expect(disabled.status == .ok)
                db.clock.advance(by: 30)  // the resend countdown
                let requestID = try await requestOTP(client, "+995511200301")
                let answer = try await verifyOTP(client, requestID, try await otpCode(db, phone: "+995511200301"))
                #expect(answer.status == .forbidden && answer.string("error") == "account_disabled")
                #expect(try await db.sessions().filter(\.live).isEmpty)
            }
        }
    }
}
