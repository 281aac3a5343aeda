import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: password and email changes", .timeLimit(.minutes(10)))
struct ChangesEndpointTests {
    func app(_ db: MemoryBackend) throws -> some ApplicationProtocol { try testApplication(db) }

    func grant(_ client: some TestClientProtocol, _ access: String) async throws -> String {
        try #require(
            try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access).string("reauth_token"))
    }

    @Test("removing the phone and the email: re-auth first, never the last method, the email and its password go together")
    func removeMethods() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let refused = try await call(client, .delete, "/me/auth-methods/phone", token: access)
                #expect(refused.status == .forbidden && refused.string("error") == "reauth_required")
                let reauth = try await grant(client, access)
                let options = try await call(client, .get, "/me/reauth-options?action=remove_email", token: access)
                #expect(options.body["methods"] as? [String] == ["phone"])
                let android = try await call(client, .get, "/me/reauth-options?action=delete_account&platform=android", token: access)
                #expect(android.status == .ok && android.body["methods"] as? [String] == ["password", "phone", "email_link"])
                let unknown = try await call(client, .get, "/me/reauth-options?action=remove_all&platform=symbian", token: access)
                #expect(unknown.status == .unprocessableContent && unknown.problemCodes == ["invalid_action", "invalid_platform"])

                let hub = try await call(client, .delete, "/me/auth-methods/email", token: access, reauth: reauth)
                #expect(hub.status == .ok)
                #expect(hub.body["email"] is NSNull && hub.body["has_password"] as? Bool == false && hub.string("phone") == "+995511200300")
                let last = try await call(client, .delete, "/me/auth-methods/phone", token: access, reauth: reauth)
                #expect(last.status == .conflict && last.string("error") == "last_method")
                #expect(
                    last.string("message")
                        == "This is your only sign-in method. Add an email, Apple or Google first — then you can remove your phone number.")
                let none = try await call(client, .delete, "/me/auth-methods/email", token: access, reauth: reauth)
                #expect(none.status == .conflict && none.string("error") == "no_email")

                // The address and its password no longer sign in. The removed address is told, with a
                // way back, and held from anyone else while that link lives.
                let login = try await call(
                    client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"])
                #expect(login.status == .unauthorized)
                let notice = try await outboxMessage(db, template: "email_removed_notice")
                #expect(notice.to == "ana@example.com" && notice.token != nil)
                let held = try await call(
                    client, .post, "/auth/email/signup", ["email": "ana@example.com", "password": "violet-harbor-91"])
                #expect(held.status == .conflict && held.string("error") == "email_held")
                // The phone, the account's remaining way in, hears of it by text.
                let removal = try await db.queuedMessages(template: "method_removed").filter { $0.channel == "sms" }
                #expect(removal.count == 1 && removal.first?.to == "+995511200300" && removal.first?.details?["method"] == "email")
                db.clock.advance(by: 604_801)
                _ = try await signUp(client, email: "ana@example.com")
                let phone = try await phoneSignIn(client, db, "+995511200300")
                #expect(try await call(client, .get, "/me/auth-methods", token: phone).body["email"] is NSNull)
            }
        }
    }

    @Test("racing removals of the phone and the email: exactly one succeeds, one method is left")
    func removeRace() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let reauth = try await grant(client, access)
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for method in ["phone", "email", "phone", "email", "email", "phone"] {
                        group.addTask {
                            try await call(client, .delete, "/me/auth-methods/\(method)", token: access, reauth: reauth).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .ok }.count == 1)
                #expect(statuses.filter { $0 == .conflict }.count == 5)
                let hub = try await call(client, .get, "/me/auth-methods", token: access)
                let left = [hub.string("phone") != nil, hub.body["has_password"] as? Bool == true].filter { $0 }
                #expect(left.count == 1)
            }
        }
    }

    @Test("password change: re-auth, every rule at once, then exactly the other sessions end")
    func changePassword() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let other = try await signIn(client, email: "ana@example.com")
                let refused = try await call(client, .post, "/auth/password/change", ["new_password": "copper-lantern-77"], token: access)
                #expect(refused.status == .forbidden)
                #expect(refused.string("error") == "reauth_required")
                let reauth = try await grant(client, access)
                let weak = try await call(
                    client, .post, "/auth/password/change", ["new_password": "1234567"], token: access, reauth: reauth)
                #expect(weak.status == .unprocessableContent)
                let codes = (weak.body["errors"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
                #expect(codes == ["too_short", "too_common", "all_digits"])
                let same = try await call(
                    client, .post, "/auth/password/change", ["new_password": "violet-harbor-91"], token: access, reauth: reauth)
                #expect((same.body["errors"] as? [[String: Any]])?.first?["code"] as? String == "same_as_current")
                #expect(
                    (same.body["errors"] as? [[String: Any]])?.first?["message"] as? String
                        == "Pick something different from your current password.")
                let done = try await call(
                    client, .post, "/auth/password/change", ["new_password": "copper-lantern-77"], token: access, reauth: reauth)
                #expect(done.status == .ok)
                #expect(done.string("message") == "Password updated. You're signed out on other devices.")
                #expect(try await call(client, .get, "/me", token: access).status == .ok)
                #expect(try await call(client, .get, "/me", token: other).status == .unauthorized)
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"]).status
                        == .unauthorized)
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "copper-lantern-77"]).status
                        == .ok)
                let revoked = try await db.sessions().filter { !$0.live }.compactMap(\.revokedReason)
                #expect(revoked == ["password_changed"])
            }
        }
    }

    @Test("a stolen access token alone changes neither the password nor the email of an email + password account")
    func stolenSession() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let options = try await call(client, .get, "/me/reauth-options?action=change_password", token: access)
                #expect(options.body["methods"] as? [String] == ["email_link"])
                #expect(options.body["last_method"] as? Bool == false)
                let emailOptions = try await call(client, .get, "/me/reauth-options?action=change_email", token: access)
                #expect(emailOptions.body["methods"] as? [String] == ["password"])
                #expect(emailOptions.body["last_method"] as? Bool == false)
                let password = try await call(client, .post, "/auth/password/change", ["new_password": "copper-lantern-77"], token: access)
                #expect(password.status == .forbidden)
                #expect(password.string("error") == "reauth_required")
                let email = try await call(client, .post, "/auth/email/request-change", ["new_email": "eve@example.com"], token: access)
                #expect(email.status == .forbidden)
                #expect(try await db.queuedMessages(template: nil).count { $0.to == "eve@example.com" } == 0)
                // The owner passes with the emailed link.
                let grant = try await emailLinkGrant(client, db, token: access)
                #expect(
                    try await call(
                        client, .post, "/auth/password/change", ["new_password": "copper-lantern-77"], token: access, reauth: grant
                    ).status == .ok)
            }
        }
    }

    @Test("recovery wins: a password reset ends a pending email-change link and every grant")
    func pendingLinkAfterReset() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let attacker = try await accountWithPhone(client, db)
                let grant = try await grant(client, attacker)
                #expect(
                    try await call(
                        client, .post, "/auth/email/request-change", ["new_email": "eve@example.com"], token: attacker, reauth: grant
                    ).status == .accepted)
                let change = try #require(try await outboxMessage(db, template: "email_change_confirm").token)
                // The owner resets the password from the reset link.
                #expect(try await call(client, .post, "/auth/password/forgot", ["email": "ana@example.com"]).status == .accepted)
                let reset = try await outboxToken(db, template: "password_reset")
                #expect(
                    try await call(
                        client, .post, "/auth/password/reset", ["token": reset, "new_password": "copper-lantern-77"]
                    ).status == .ok)
                let late = try await call(client, .post, "/auth/email/confirm-change", ["token": change])
                #expect(late.status == .gone)
                #expect(late.string("error") == "link_expired")
                let owner = try await logIn(client, email: "ana@example.com", password: "copper-lantern-77")
                #expect(try await call(client, .get, "/me/auth-methods", token: owner).string("email") == "ana@example.com")
                let revoked =
                    try await db.storedEventCount(type: "email.links_revoked") + db.storedEventCount(type: "reauth.grants_revoked")
                #expect(revoked == 2)
                #expect(try await db.unusedLinkCount(purpose: "email_change") == 0)
            }
        }
    }

    @Test("a corrected email change ends the link sent to the mistyped address: its stranger cannot confirm it")
    func correctedEmailChange() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let grant = try await grant(client, access)
                func request(_ address: String) async throws -> String {
                    let answer = try await call(
                        client, .post, "/auth/email/request-change", ["new_email": address], token: access, reauth: grant)
                    #expect(answer.status == .accepted)
                    let sent = try await outboxMessage(db, template: "email_change_confirm")
                    #expect(sent.to == address)
                    return try #require(sent.token)
                }
                let mistyped = try await request("an@example.org")
                db.clock.advance(by: 61)
                let corrected = try await request("ana.new@example.org")
                let stranger = try await call(client, .post, "/auth/email/confirm-change", ["token": mistyped])
                #expect(stranger.status == .gone && stranger.string("error") == "link_expired")
                #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": corrected]).status == .ok)
                #expect(try await call(client, .get, "/me/auth-methods", token: access).string("email") == "ana.new@example.org")
            }
        }
    }

    @Test(
        "email change: link to the new address, notice to the old, revert link after, the old address held until then; taken addresses 409")
    func changeEmail() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                _ = try await signUp(client, email: "bo@example.com")
                let body: [String: Any] = ["new_email": "ana.new@example.com"]
                #expect(try await call(client, .post, "/auth/email/request-change", body, token: access).status == .forbidden)
                let reauth = try await grant(client, access)
                let taken = try await call(
                    client, .post, "/auth/email/request-change", ["new_email": "BO@example.com"], token: access, reauth: reauth)
                #expect(taken.status == .conflict)
                #expect(taken.string("error") == "email_taken")
                #expect(taken.string("message") == "This email is already in use by another account.")
                let invalid = try await call(
                    client, .post, "/auth/email/request-change", ["new_email": "nope"], token: access, reauth: reauth)
                #expect(invalid.status == .unprocessableContent)
                #expect(invalid.string("error") == "invalid_email")
                let same = try await call(
                    client, .post, "/auth/email/request-change", ["new_email": " ANA@example.com"], token: access, reauth: reauth)
                #expect(same.status == .unprocessableContent && same.problemCodes == ["same_as_current"])
                #expect(
                    try await call(client, .post, "/auth/email/request-change", body, token: access, reauth: reauth).status == .accepted)
                let confirmation = try await outboxMessage(db, template: "email_change_confirm")
                #expect(confirmation.to == "ana.new@example.com")
                let notice = try await outboxMessage(db, template: "email_change_notice")
                #expect(notice.to == "ana@example.com" && notice.token == nil)
                let noticeLink = try #require(try await db.queuedMessages(template: "email_change_notice").first)
                #expect(noticeLink.link == nil && noticeLink.code == nil)
                let token = try #require(confirmation.token)
                let hub = try await call(client, .post, "/auth/email/confirm-change", ["token": token])
                #expect(hub.status == .ok)
                #expect(hub.string("email") == "ana.new@example.com")
                #expect(hub.body["email_verified"] as? Bool == true)
                let reused = try await call(client, .post, "/auth/email/confirm-change", ["token": token])
                #expect(reused.status == .gone)
                #expect(reused.string("message") == "This link has expired")
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana.new@example.com", "password": "violet-harbor-91"])
                        .status == .ok)
                // Whoever moved the email cannot take the old address to block the way back: it is
                // held for the revert link's life.
                let squat = try await call(
                    client, .post, "/auth/email/signup", ["email": "ana@example.com", "password": "copper-lantern-77"])
                #expect(squat.status == .conflict && squat.string("error") == "email_held")
                #expect(squat.string("message") == "This email was recently used by another account. Try again later.")
                // The old address's owner reverts: the address is back and every session ends.
                let revert = try await outboxMessage(db, template: "email_changed_notice")
                #expect(revert.to == "ana@example.com")
                let revertNotice = try #require(try await db.queuedMessages(template: "email_changed_notice").first)
                #expect(revertNotice.details?["message"] == "Your email was changed. If this wasn't you, click here to revert.")
                // Whoever made the change may know the password: the revert sets a new one.
                let bare = try await call(client, .post, "/auth/email/revert", ["token": try #require(revert.token)])
                #expect(bare.status == .unprocessableContent && bare.problemCodes == ["required"])
                let reverted = try await call(
                    client, .post, "/auth/email/revert", ["token": try #require(revert.token), "new_password": "amber-orchard-52"])
                #expect(reverted.status == .ok)
                #expect(reverted.string("email") == "ana@example.com")
                // The phone was added by the session that made the change: it goes with it.
                #expect(reverted.body["removed_methods"] as? [String] == ["phone"])
                #expect(reverted.body["two_factor_reset"] as? Bool == false)
                #expect(try await call(client, .get, "/me", token: access).status == .unauthorized)
                let active = try await db.sessions().count { $0.accountEmail == "ana@example.com" && $0.live }
                #expect(active == 0)
                #expect(
                    try await call(client, .post, "/auth/email/revert", ["token": try #require(revert.token), "new_password": "x"]).status
                        == .gone)
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"]).status
                        == .unauthorized)
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "amber-orchard-52"]).status
                        == .ok)
            }
        }
    }

    @Test("whoever moved the email twice and reverts the second change leaves the owner's first revert link working")
    func ownersRevertSurvivesTheAttackersRevert() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                _ = try await emailLinkGrant(client, db, token: access)  // a verified address gets a revert link
                func move(to email: String) async throws -> String {
                    let reauth = try await grant(client, access)
                    #expect(
                        try await call(client, .post, "/auth/email/request-change", ["new_email": email], token: access, reauth: reauth)
                            .status == .accepted)
                    let confirm = try #require(try await outboxMessage(db, template: "email_change_confirm").token)
                    #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": confirm]).status == .ok)
                    return try await outboxToken(db, template: "email_changed_notice")
                }
                let ownersWayBack = try await move(to: "eve@example.com")
                db.clock.advance(by: 60)
                let attackersOwn = try await move(to: "mallory@example.com")
                let back = try await call(client, .post, "/auth/email/revert", ["token": attackersOwn, "new_password": "amber-orchard-52"])
                #expect(back.status == .ok && back.string("email") == "eve@example.com")
                // The owner's link, sent before the attacker's, still works: through the link
                // index the service reads, not only in the account's state.
                let owner = try await call(
                    client, .post, "/auth/email/revert", ["token": ownersWayBack, "new_password": "rowan-meadow-38"])
                #expect(owner.status == .ok)
                #expect(owner.string("email") == "ana@example.com")
            }
        }
    }

    @Test("a revert link works for 7 days")
    func revertLinkExpiry() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                var reverts: [String] = []
                for name in ["ana", "bo"] {
                    let access = try await signUp(client, email: "\(name)@example.com")
                    let reauth = try await emailLinkGrant(client, db, token: access)  // verifies the address
                    db.clock.advance(by: 30)
                    #expect(
                        try await call(
                            client, .post, "/auth/email/request-change", ["new_email": "\(name).new@example.com"], token: access,
                            reauth: reauth
                        ).status == .accepted)
                    let confirm = try #require(try await outboxMessage(db, template: "email_change_confirm").token)
                    #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": confirm]).status == .ok)
                    reverts.append(try #require(try await outboxMessage(db, template: "email_changed_notice").token))
                }
                db.clock.advance(by: 604_799 - 30)
                #expect(
                    try await call(client, .post, "/auth/email/revert", ["token": reverts[0], "new_password": "amber-orchard-52"]).status
                        == .ok)
                db.clock.advance(by: 32)
                let late = try await call(client, .post, "/auth/email/revert", ["token": reverts[1], "new_password": "amber-orchard-52"])
                #expect(late.status == .gone)
                #expect(late.string("error") == "link_expired")
            }
        }
    }

    @Test("an email-change link works for 30 minutes")
    func changeLinkExpiry() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let reauth = try await grant(client, access)
                #expect(
                    try await call(
                        client, .post, "/auth/email/request-change", ["new_email": "ana.new@example.com"], token: access, reauth: reauth
                    ).status == .accepted)
                let token = try #require(try await outboxMessage(db, template: "email_change_confirm").token)
                db.clock.advance(by: 1801)
                #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": token]).status == .gone)
                #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": "junk"]).status == .gone)
            }
        }
    }

    @Test("a phone-only account adds email and password: rules inline, taken 409, claimed only once its link is used")
    func addEmailAndPassword() async throws {
        try await MemoryBackend.with { db in
            try await app(db).test(.router) { client in
                let bo = try await signUp(client, email: "bo@example.com")
                _ = try await emailLinkGrant(client, db, token: bo)  // verifies bo@
                let access = try await phoneSignIn(client, db, "+995511200300")
                // Adding a way in takes re-auth: a stolen session cannot add its own password.
                let stolen = try await call(
                    client, .post, "/auth/email/add-with-password", ["email": "eve@example.com", "password": "copper-lantern-77"],
                    token: access)
                #expect(stolen.status == .forbidden)
                #expect(stolen.string("error") == "reauth_required")
                let grant = try await phoneGrant(client, db, token: access, phone: "+995511200300")
                let weak = try await call(
                    client, .post, "/auth/email/add-with-password", ["email": "x", "password": "1234567"], token: access, reauth: grant)
                #expect(weak.status == .unprocessableContent)
                let codes = (weak.body["errors"] as? [[String: Any]])?.compactMap { $0["code"] as? String }
                #expect(codes == ["invalid_email", "too_short", "too_common", "all_digits"])
                let taken = try await call(
                    client, .post, "/auth/email/add-with-password", ["email": "bo@example.com", "password": "copper-lantern-77"],
                    token: access,
                    reauth: grant)
                #expect(taken.status == .conflict)
                #expect(taken.string("error") == "email_taken")
                let added = try await call(
                    client, .post, "/auth/email/add-with-password", ["email": "ana@example.com", "password": "copper-lantern-77"],
                    token: access,
                    reauth: grant)
                #expect(added.status == .accepted && added.body["resend_after"] as? Int == 30)
                let confirmation = try await outboxMessage(db, template: "email_add_confirm")
                #expect(confirmation.to == "ana@example.com")
                // Nothing is claimed meanwhile: the hub shows the address as pending, and it does not sign in.
                let waiting = try await call(client, .get, "/me/auth-methods", token: access)
                #expect(waiting.body["email"] is NSNull && waiting.string("pending_email") == "ana@example.com")
                #expect(waiting.body["has_password"] as? Bool == false)
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "copper-lantern-77"]).status
                        == .unauthorized)
                let confirmed = try await call(client, .post, "/auth/email/confirm-change", ["token": try #require(confirmation.token)])
                #expect(confirmed.status == .ok && confirmed.string("email") == "ana@example.com")
                let hub = try await call(client, .get, "/me/auth-methods", token: access)
                #expect(hub.string("email") == "ana@example.com" && hub.body["has_password"] as? Bool == true)
                #expect(hub.body["email_verified"] as? Bool == true && hub.body["pending_email"] is NSNull)
                #expect(hub.string("phone") == "+995511200300")
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "copper-lantern-77"]).status
                        == .ok)
                // The phone's owner is told, by text (the account had no email before).
                let notice = try await outboxMessage(db, template: "method_added")
                #expect(notice.to == "+995511200300")
                let again = try await call(
                    client, .post, "/auth/email/add-with-password", ["email": "ana2@example.com", "password": "copper-lantern-77"],
                    token: access,
                    reauth: grant)
                #expect(again.status == .conflict)
                #expect(again.string("error") == "email_exists")
            }
        }
    }
}
