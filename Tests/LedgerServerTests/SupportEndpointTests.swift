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

/// The support desk's API (docs/support.md): scopes, the operator and the reason, exact
/// searches, each fix, and the `admin.*` record of every call on the account's stream.
@Suite("HTTP: the support desk", .timeLimit(.minutes(10)))
struct SupportEndpointTests {
    /// A support call by `key`, named by `operatorName` (nil: no header).
    func desk(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, _ body: [String: Any]? = nil, key: String,
        operatorName: String? = "Nino (support)", path: String? = nil
    ) async throws -> Answer {
        var headers = HTTPFields()
        if let operatorName { headers[HTTPField.Name("X-Ledger-Operator")!] = operatorName }
        return try await call(client, method, uri, body, token: key, path: path, headers: headers)
    }

    @Test(
        "each call's scope: support reads and makes the everyday fixes, admin also the heavy ones; other keys and users' tokens are refused"
    )
    func scopes() async throws {
        try await MemoryBackend.with { db in
            let support = try await db.apiKeys.create(name: "desk", scopes: [.accountsSupport]).key
            let admin = try await db.apiKeys.create(name: "lead", scopes: [.accountsAdmin]).key
            let holds = try await db.apiKeys.create(name: "bookings", scopes: [.holdsWrite]).key
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let base = "/admin/accounts/\(accountID)"
                let why = ["reason": "ticket 4411"]
                // No key, a wrong one, a user's own access token, a key of another scope.
                for key in ["", "lk_wrong", access] {
                    #expect(try await desk(client, .get, base, key: key, path: "/admin/accounts/{id}").status == .unauthorized)
                }
                #expect(try await desk(client, .get, base, key: holds, path: "/admin/accounts/{id}").status == .forbidden)
                // Support may not make the heavy changes; nothing happened.
                let heavy: [(HTTPRequest.Method, String, String)] = [
                    (.post, "\(base)/two-factor/reset", "/admin/accounts/{id}/two-factor/reset"),
                    (.delete, "\(base)/auth-methods/phone", "/admin/accounts/{id}/auth-methods/{method}"),
                    (.delete, "\(base)/passkeys/\(UUID().uuidString)", "/admin/accounts/{id}/passkeys/{passkey_id}"),
                    (.post, "\(base)/disable", "/admin/accounts/{id}/disable"),
                    (.post, "\(base)/enable", "/admin/accounts/{id}/enable"),
                ]
                for (method, uri, path) in heavy {
                    let refused = try await desk(client, method, uri, why, key: support, path: path)
                    #expect(refused.status == .forbidden && refused.string("error") == "insufficient_scope", "\(uri)")
                }
                #expect(try await call(client, .get, "/me", token: access).status == .ok)
                // Support reads; admin includes support.
                #expect(try await desk(client, .get, base, key: support, path: "/admin/accounts/{id}").status == .ok)
                #expect(try await desk(client, .get, "\(base)/sessions", key: admin, path: "/admin/accounts/{id}/sessions").status == .ok)
                #expect(
                    try await desk(client, .post, "\(base)/disable", why, key: admin, path: "/admin/accounts/{id}/disable").status == .ok)
            }
        }
    }

    @Test("every call names its operator (400 operator_required) and every change its reason (422); a bad id or account is 404")
    func operatorAndReason() async throws {
        try await MemoryBackend.with { db in
            let admin = try await db.apiKeys.create(name: "lead", scopes: [.accountsAdmin]).key
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let base = "/admin/accounts/\(accountID)"
                for name in [nil, "", "   ", String(repeating: "n", count: 201)] as [String?] {
                    let refused = try await desk(client, .get, base, key: admin, operatorName: name, path: "/admin/accounts/{id}")
                    #expect(refused.status == .badRequest && refused.string("error") == "operator_required", "\(String(describing: name))")
                }
                let signOut = "/admin/accounts/{id}/sign-out"
                for body in [nil, [:], ["reason": " "], ["reason": String(repeating: "r", count: 501)]] as [[String: Any]?] {
                    let refused = try await desk(client, .post, "\(base)/sign-out", body, key: admin, path: signOut)
                    #expect(refused.problemCodes == ["invalid_reason"], "\(String(describing: body))")
                }
                #expect(try await desk(client, .post, "\(base)/sign-out", ["reason": 7], key: admin, path: signOut).status == .badRequest)
                #expect(try await call(client, .get, "/me", token: access).status == .ok, "nothing changed")
                let unknown = try await desk(client, .get, "/admin/accounts/\(UUID().uuidString)", key: admin, path: "/admin/accounts/{id}")
                #expect(unknown.status == .notFound && unknown.string("error") == "no_account")
                #expect(
                    try await desk(client, .get, "/admin/accounts/not-an-id", key: admin, path: "/admin/accounts/{id}").status == .notFound)
                let noMethod = try await desk(
                    client, .delete, "\(base)/auth-methods/password", ["reason": "x"], key: admin,
                    path: "/admin/accounts/{id}/auth-methods/{method}")
                #expect(noMethod.status == .notFound)
                #expect(try await db.history(of: try #require(UUID(uuidString: accountID))).allSatisfy { !$0.type.hasPrefix("admin.") })
            }
        }
    }

    @Test("search is exact, by one identifier: email, phone, user id, handle; a part finds nothing; each find is recorded")
    func search() async throws {
        try await MemoryBackend.with { db in
            let support = try await db.apiKeys.create(name: "desk", scopes: [.accountsSupport]).key
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                #expect(try await call(client, .patch, "/me/profile", ["handle": "ana_g"], token: access).status == .ok)
                let me = try await call(client, .get, "/me", token: access)
                let accountID = try #require(me.string("account_id"))
                let userID = try #require(me.string("user_id"))
                func search(_ query: String) async throws -> Answer {
                    try await desk(client, .get, "/admin/accounts?\(query)", key: support, path: "/admin/accounts")
                }
                for query in [
                    "email=ANA@example.com", "phone=%2B995511200300", "user_id=\(userID)", "user_id=\(accountID)", "handle=Ana_G",
                ] {
                    let found = try await search(query)
                    let accounts = found.body["accounts"] as? [[String: Any]] ?? []
                    #expect(found.status == .ok && accounts.count == 1 && accounts.first?["account_id"] as? String == accountID, "\(query)")
                    #expect(accounts.first?["status"] as? String == "active" && accounts.first?["email"] as? String == "ana@example.com")
                }
                for query in ["email=ana@example.co", "email=na@example.com", "phone=%2B9955112003001", "handle=ana_", "handle=ana_gg"] {
                    let missed = try await search(query)
                    #expect((missed.body["accounts"] as? [Any])?.isEmpty ?? (missed.status == .unprocessableContent), "\(query)")
                }
                #expect(try await search("email=ana@example.com&handle=ana_g").status == .badRequest)
                #expect(try await search("").status == .badRequest)
                #expect(try await search("email=not-an-address").status == .unprocessableContent)
                let views = try await db.history(of: try #require(UUID(uuidString: accountID))).filter { $0.type == "admin.viewed" }
                #expect(views.count == 5)
                let view = try #require(
                    try views.first.map { try JSONSerialization.jsonObject(with: Data($0.payload ?? [])) as? [String: Any] })
                #expect(view?["view"] as? String == "search" && view?["operator"] as? String == "Nino (support)")
                #expect(view?["key_id"] as? String != nil && view?["reason"] == nil)
                // Nothing of the terms is kept.
                let recorded = String(decoding: views.first?.payload ?? [], as: UTF8.self)
                #expect(!recorded.contains("ana@") && !recorded.contains("example"))
            }
        }
    }

    @Test("searches are counted per key before the lookup: past the limit, 429 and nothing looked up or recorded")
    func searchLimit() async throws {
        try await MemoryBackend.with { db in
            let support = try await db.apiKeys.create(name: "desk", scopes: [.accountsSupport]).key
            let other = try await db.apiKeys.create(name: "desk 2", scopes: [.accountsSupport]).key
            try await testApplication(db) { $0.policies.supportReadLimit = 3 }.test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                for index in 0..<3 {
                    let answer = try await desk(
                        client, .get, "/admin/accounts?email=guess\(index)@example.com", key: support, path: "/admin/accounts")
                    #expect(answer.status == .ok)
                }
                let refused = try await desk(client, .get, "/admin/accounts?email=ana@example.com", key: support, path: "/admin/accounts")
                #expect(refused.status == .tooManyRequests && refused.headers[.retryAfter] != nil)
                #expect(try await db.history(of: try #require(UUID(uuidString: accountID))).allSatisfy { $0.type != "admin.viewed" })
                // Another key has its own count; an hour later the first has its again.
                #expect(
                    try await desk(client, .get, "/admin/accounts?email=ana@example.com", key: other, path: "/admin/accounts").status == .ok
                )
                db.clock.advance(by: 3601)
                #expect(
                    try await desk(client, .get, "/admin/accounts?email=ana@example.com", key: support, path: "/admin/accounts").status
                        == .ok)
            }
        }
    }

    @Test("sign out everywhere: every session and grant ends, recorded with key, operator and reason; the owner is told")
    func signOut() async throws {
        try await MemoryBackend.with { db in
            let support = try await db.apiKeys.create(name: "desk", scopes: [.accountsSupport]).key
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let second = try await logIn(client, email: "ana@example.com")
                db.clock.advance(by: 30)  // the link resend countdown
                _ = try await emailLinkGrant(client, db, token: second)
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let sessions = try await desk(
                    client, .get, "/admin/accounts/\(accountID)/sessions", key: support, path: "/admin/accounts/{id}/sessions")
                #expect((sessions.body["sessions"] as? [[String: Any]])?.count == 2)
                let ended = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/sign-out", ["reason": "lost phone, caller verified by ID"], key: support,
                    path: "/admin/accounts/{id}/sign-out")
                #expect(ended.status == .ok && ended.body["sessions_revoked"] as? Int == 2)
                #expect(try await call(client, .get, "/me", token: access).status == .unauthorized)
                #expect(try await call(client, .get, "/me", token: second).status == .unauthorized)
                let state = try await db.state(of: try #require(UUID(uuidString: accountID)))
                #expect(state.reauthGrants.isEmpty, "the grant ended with its session")
                let types = try await db.history(of: try #require(UUID(uuidString: accountID))).map(\.type)
                let recorded = try #require(types.firstIndex(of: "admin.signed_out"))
                #expect(types[(recorded + 1)...].prefix(2) == ["session.revoked", "session.revoked"])
                // Every established contact is told: the verified email and the phone.
                let told = try await db.queuedMessages(template: "changed_by_support")
                #expect(
                    Set(told.map(\.to)) == ["ana@example.com", "+995511200300"] && told.allSatisfy { $0.details?["action"] == "signed_out" }
                )
                #expect(told.allSatisfy { $0.details?["reason"] == nil && $0.details?["operator"] == nil })
                // Again, with nobody signed in: recorded, nothing ended, nobody told again.
                let again = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/sign-out", ["reason": "again"], key: support,
                    path: "/admin/accounts/{id}/sign-out")
                #expect(again.body["sessions_revoked"] as? Int == 0)
                #expect(try await db.queuedMessages(template: "changed_by_support").count == 2)
            }
        }
    }

    @Test("a reset link to the verified email (202), within the resend limits; 409 no_verified_email without one")
    func passwordReset() async throws {
        try await MemoryBackend.with { db in
            let support = try await db.apiKeys.create(name: "desk", scopes: [.accountsSupport]).key
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let path = "/admin/accounts/{id}/password-reset"
                let sent = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/password-reset", ["reason": "forgot"], key: support, path: path)
                #expect(sent.status == .accepted)
                let link = try #require(try await db.queuedMessages(template: "password_reset").last)
                #expect(link.to == "ana@example.com" && link.token != nil)
                #expect(try await db.queuedMessages(template: "changed_by_support").first?.details?["action"] == "password_reset_sent")
                // The link works as "Forgot password"'s does.
                let reset = try await call(
                    client, .post, "/auth/password/reset", ["token": try #require(link.token), "new_password": "amber-meadow-42"])
                #expect(reset.status == .ok)
                let again = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/password-reset", ["reason": "again"], key: support, path: path)
                #expect(again.status == .tooManyRequests)

                let unverified = try await signUp(client, email: "bea@example.com")
                let beaID = try #require(try await call(client, .get, "/me", token: unverified).string("account_id"))
                let refused = try await desk(
                    client, .post, "/admin/accounts/\(beaID)/password-reset", ["reason": "forgot"], key: support, path: path)
                #expect(refused.status == .conflict && refused.string("error") == "no_verified_email")
                #expect(try await db.history(of: try #require(UUID(uuidString: beaID))).allSatisfy { !$0.type.hasPrefix("admin.") })
            }
        }
    }

    @Test("admin removes a lost phone, never the last method; the owner hears from support, not a method_removed notice")
    func removeMethod() async throws {
        try await MemoryBackend.with { db in
            let admin = try await db.apiKeys.create(name: "lead", scopes: [.accountsAdmin]).key
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let path = "/admin/accounts/{id}/auth-methods/{method}"
                func remove(_ method: String) async throws -> Answer {
                    try await desk(
                        client, .delete, "/admin/accounts/\(accountID)/auth-methods/\(method)", ["reason": "lost phone"], key: admin,
                        path: path)
                }
                let removed = try await remove("phone")
                #expect(removed.status == .ok && removed.body["phone"] is NSNull && removed.body["has_password"] as? Bool == true)
                #expect(try await remove("phone").string("error") == "not_linked")
                #expect(try await remove("apple").string("error") == "not_linked")
                let last = try await remove("email")
                #expect(last.status == .conflict && last.string("error") == "last_method")
                #expect(try await db.queuedMessages(template: "method_removed").isEmpty)
                let told = try await db.queuedMessages(template: "changed_by_support")
                #expect(
                    told.allSatisfy { $0.details?["method"] == "phone" } && Set(told.map(\.to)) == ["ana@example.com", "+995511200300"])
                let passkey = try await desk(
                    client, .delete, "/admin/accounts/\(accountID)/passkeys/\(UUID().uuidString)", ["reason": "x"], key: admin,
                    path: "/admin/accounts/{id}/passkeys/{passkey_id}")
                #expect(passkey.status == .notFound)
            }
        }
    }

    @Test("admin resets two-factor: TOTP off, recovery codes void, every session ends; without TOTP 409")
    func resetTwoFactor() async throws {
        try await MemoryBackend.with { db in
            let admin = try await db.apiKeys.create(name: "lead", scopes: [.accountsAdmin]).key
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let grant = try await emailLinkGrant(client, db, token: access)
                let begun = try await call(client, .post, "/me/mfa/totp", token: access, reauth: grant)
                let base32 = try #require(begun.string("secret"))
                let secret = try #require(TOTPCodes.secret(fromBase32: base32))
                let code = TOTPCodes.code(secret, step: TOTPCodes.step(at: db.clock.now()))
                #expect(try await call(client, .post, "/me/mfa/totp/confirm", ["code": code], token: access).status == .ok)
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let path = "/admin/accounts/{id}/two-factor/reset"
                let reset = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/two-factor/reset", ["reason": "lost authenticator, ID checked"],
                    key: admin,
                    path: path)
                #expect(reset.status == .ok && reset.body["two_factor"] as? Bool == false && reset.body["sessions"] as? Int == 0)
                #expect(reset.body["recovery_codes_left"] as? Int == 0)
                #expect(try await call(client, .get, "/me", token: access).status == .unauthorized)
                // Signing in asks no second factor now.
                let login = try await call(
                    client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"])
                #expect(login.status == .ok && login.string("access_token") != nil)
                #expect(try await db.queuedMessages(template: "two_factor_changed").count == 1, "only the owner's own enabling")
                #expect(try await db.queuedMessages(template: "changed_by_support").first?.details?["action"] == "two_factor_reset")
                let again = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/two-factor/reset", ["reason": "x"], key: admin, path: path)
                #expect(again.status == .conflict && again.string("error") == "mfa_not_enabled")
            }
        }
    }

    @Test("admin disables and enables: the summary answers, sessions end, sign-ins are refused meanwhile; a deleted account is 410")
    func disableEnableDeleted() async throws {
        try await MemoryBackend.with { db in
            let admin = try await db.apiKeys.create(name: "lead", scopes: [.accountsAdmin]).key
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let disabled = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/disable", ["reason": "chargeback fraud"], key: admin,
                    path: "/admin/accounts/{id}/disable")
                #expect(
                    disabled.status == .ok && disabled.string("status") == "disabled"
                        && disabled.string("disabled_reason") == "chargeback fraud")
                #expect(try await call(client, .get, "/me", token: access).status == .unauthorized)
                let login = try await call(
                    client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"])
                #expect(login.string("error") == "account_disabled")
                let enabled = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/enable", ["reason": "resolved"], key: admin,
                    path: "/admin/accounts/{id}/enable")
                #expect(enabled.status == .ok && enabled.string("status") == "active")
                let types = try await db.history(of: try #require(UUID(uuidString: accountID))).map(\.type)
                #expect(types.suffix(2) == ["admin.enabled", "account.enabled"])
                // The person's export says support acted, not who or why (the disable's own reason is theirs to read).
                let exported = try await call(client, .get, "/me/export", token: try await logIn(client, email: "ana@example.com"))
                let records = (exported.body["events"] as? [[String: Any]] ?? []).filter {
                    ($0["type"] as? String)?.hasPrefix("admin.") == true
                }
                #expect(records.count == 2)
                for record in records {
                    let data = record["data"] as? [String: Any]
                    #expect(data?["operator"] == nil && data?["reason"] == nil && data?["key_id"] == nil)
                }

                let second = try await logIn(client, email: "ana@example.com")
                db.clock.advance(by: 30)  // the link resend countdown
                let grant = try await emailLinkGrant(client, db, token: second)
                #expect(try await call(client, .delete, "/me", token: second, reauth: grant).status == .accepted)
                let summary = try await desk(client, .get, "/admin/accounts/\(accountID)", key: admin, path: "/admin/accounts/{id}")
                #expect(summary.string("status") == "deletion_scheduled" && summary.string("purge_after") != nil)
                let refused = try await desk(
                    client, .post, "/admin/accounts/\(accountID)/sign-out", ["reason": "x"], key: admin,
                    path: "/admin/accounts/{id}/sign-out")
                #expect(refused.status == .gone && refused.string("error") == "account_deleted")
            }
        }
    }
}
