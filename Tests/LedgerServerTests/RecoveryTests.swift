import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import Testing

/// The takeover attacks, tried as an attacker with a stolen access token and one factor would
/// (docs/accounts.md, "Recovery after a takeover"), and the owner's way back.
@Suite("HTTP: recovery after a takeover", .timeLimit(.minutes(10)))
struct RecoveryTests {
    typealias Providers = ProviderEndpointTests.Providers

    /// The owner's account: ana@ (verified by its link) with the password, and its access token.
    func owner(_ client: some TestClientProtocol, _ db: some TestBackend) async throws -> String {
        let access = try await signUp(client, email: "ana@example.com")
        _ = try await emailLinkGrant(client, db, token: access)
        return access
    }

    func outboxCount(_ db: some TestBackend, template: String, to recipient: String) async throws -> Int {
        try await db.queuedMessages(template: template).count { $0.to == recipient }
    }

    @Test("stolen session + phished password: link own Google, remove the email; the owner is told, reverts, and the intruder is out")
    func removedEmailReverted() async throws {
        try await ProviderEndpointTests().withApp { client, providers in
            let db = providers.db
            let stolen = try await owner(client, db)
            // The intruder: a password grant, their own Google, then the email (and the password) removed.
            let grant = try await passwordGrant(client, token: stolen)
            let linked = try await call(
                client, .post, "/me/auth-methods/link",
                [
                    "provider": "google",
                    "id_token": try await providers.googleToken("g-intruder", email: "mallory@example.net", verified: true),
                ],
                token: stolen, reauth: grant)
            #expect(linked.status == .ok)
            let removed = try await call(client, .delete, "/me/auth-methods/email", token: stolen, reauth: grant)
            #expect(removed.status == .ok && removed.body["email"] is NSNull)
            // The owner heard of both, at the address they had.
            #expect(try await outboxCount(db, template: "method_added", to: "ana@example.com") == 1)
            let notice = try await outboxMessage(db, template: "email_removed_notice")
            #expect(notice.to == "ana@example.com")
            // Nobody can take the address meanwhile.
            let squat = try await call(client, .post, "/auth/email/signup", ["email": "ana@example.com", "password": "copper-lantern-77"])
            #expect(squat.status == .conflict && squat.string("error") == "email_held")
            // The owner reverts: the address is back, the Google the intruder's session linked is gone.
            let reverted = try await call(
                client, .post, "/auth/email/revert", ["token": try #require(notice.token), "new_password": "amber-orchard-52"])
            #expect(reverted.status == .ok && reverted.string("email") == "ana@example.com")
            #expect(reverted.body["removed_methods"] as? [String] == ["google"])
            #expect(try await call(client, .get, "/me", token: stolen).status == .unauthorized)
            let back = try await logIn(client, email: "ana@example.com", password: "amber-orchard-52")
            let hub = try await call(client, .get, "/me/auth-methods", token: back)
            #expect(hub.body["google_linked"] as? Bool == false && hub.body["email_verified"] as? Bool == true)
            #expect(hub.body["has_password"] as? Bool == true)
            // The intruder's Google no longer reaches the account.
            let intruder = try await call(client, .post, "/auth/google", ["id_token": try await providers.googleToken("g-intruder")])
            #expect(intruder.status == .created && intruder.string("account_id") != hub.string("account_id"))
        }
    }

    @Test("revert after additions: the phone, Google and TOTP the intruder added after the change go, and their password with them")
    func revertAfterAdditions() async throws {
        try await ProviderEndpointTests().withApp { client, providers in
            let db = providers.db
            let stolen = try await owner(client, db)
            // The owner's own phone, added by another session before anything happened, stays.
            let own = try await logIn(client, email: "ana@example.com")
            let ownGrant = try await passwordGrant(client, token: own)
            let ownRequest = try await requestOTP(client, "+995511200300", purpose: "add_phone", token: own, reauth: ownGrant)
            #expect(
                try await verifyOTP(client, ownRequest, try await otpCode(db, phone: "+995511200300"), token: own, reauth: ownGrant).status
                    == .ok)
            db.clock.advance(by: 60)
            // The intruder moves the email to theirs, then adds their ways in and a new password.
            let grant = try await passwordGrant(client, token: stolen)
            #expect(
                try await call(
                    client, .post, "/auth/email/request-change", ["new_email": "mallory@example.net"], token: stolen, reauth: grant
                ).status == .accepted)
            let confirm = try #require(try await outboxMessage(db, template: "email_change_confirm").token)
            #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": confirm]).status == .ok)
            let removedPhone = try await call(client, .delete, "/me/auth-methods/phone", token: stolen, reauth: grant)
            #expect(removedPhone.status == .ok)
            db.clock.advance(by: 60)
            let request = try await requestOTP(client, "+995511200399", purpose: "add_phone", token: stolen, reauth: grant)
            #expect(
                try await verifyOTP(client, request, try await otpCode(db, phone: "+995511200399"), token: stolen, reauth: grant).status
                    == .ok)
            #expect(
                try await call(
                    client, .post, "/me/auth-methods/link",
                    ["provider": "google", "id_token": try await providers.googleToken("g-mallory")],
                    token: stolen, reauth: grant
                ).status == .ok)
            _ = try await TwoFactorEndpointTests().enrol(client, db, token: stolen, grant: grant)
            let changed = try await call(
                client, .post, "/auth/password/change", ["new_password": "copper-lantern-77"], token: stolen, reauth: grant)
            #expect(changed.status == .ok, "\(changed.body)")
            // The owner's revert link (to ana@) undoes all of it.
            let revert = try #require(try await outboxMessage(db, template: "email_changed_notice").token)
            let reverted = try await call(client, .post, "/auth/email/revert", ["token": revert, "new_password": "amber-orchard-52"])
            #expect(reverted.status == .ok)
            #expect(Set(reverted.body["removed_methods"] as? [String] ?? []) == ["phone", "google"])
            #expect(reverted.body["two_factor_reset"] as? Bool == true)
            #expect(try await call(client, .get, "/me", token: stolen).status == .unauthorized)
            #expect(
                try await call(client, .post, "/auth/email/login", ["email": "mallory@example.net", "password": "copper-lantern-77"]).status
                    == .unauthorized)
            let back = try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "amber-orchard-52"])
            #expect(back.status == .ok && back.body["mfa_required"] == nil)
            let signedIn: String = try #require(back.string("access_token"))
            let hub = try await call(client, .get, "/me/auth-methods", token: signedIn)
            #expect(hub.body["phone"] is NSNull && hub.body["google_linked"] as? Bool == false)
            #expect((hub.body["mfa"] as? [String: Any])?["totp"] as? Bool == false)
        }
    }

    /// Moves the email to mallory@ from `session` (a password grant) and answers the owner's revert.
    func moveAndRevert(_ client: some TestClientProtocol, _ db: some TestBackend, from session: String) async throws -> Answer {
        let grant = try await passwordGrant(client, token: session)
        #expect(
            try await call(
                client, .post, "/auth/email/request-change", ["new_email": "mallory@example.net"], token: session, reauth: grant
            ).status == .accepted)
        let confirm = try #require(try await outboxMessage(db, template: "email_change_confirm").token)
        #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": confirm]).status == .ok)
        let revert = try #require(try await outboxMessage(db, template: "email_changed_notice").token)
        return try await call(client, .post, "/auth/email/revert", ["token": revert, "new_password": "amber-orchard-52"])
    }

    @Test("TOTP turned on by a second session (the phished password) before the stolen one moves the email is off after the revert")
    func revertTOTPOfSecondSession() async throws {
        try await TwoFactorEndpointTests().withApp { client, providers in
            let db = providers.db
            _ = try await owner(client, db)
            // Session A, the owner's, is the one stolen; session B the intruder's, by the phished
            // password, where TOTP goes on.
            let credentials = ["email": "ana@example.com", "password": "violet-harbor-91"]
            let signedIn = try await call(client, .post, "/auth/email/login", credentials)
            db.clock.advance(by: 3600)
            let second = try await logIn(client, email: "ana@example.com")
            _ = try await TwoFactorEndpointTests().enrol(client, db, token: second, grant: try await passwordGrant(client, token: second))
            // Hours later, session A, refreshed meanwhile, moves the email.
            db.clock.advance(by: 5 * 3600)
            let refreshed = try await call(
                client, .post, "/auth/token/refresh", ["refresh_token": try #require(signedIn.string("refresh_token"))])
            #expect(refreshed.string("session_id") == signedIn.string("session_id"))
            let reverted = try await moveAndRevert(client, db, from: try #require(refreshed.string("access_token")))
            #expect(reverted.status == .ok && reverted.body["two_factor_reset"] as? Bool == true)
            // The owner's new password signs in with no second factor to meet.
            let back = try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "amber-orchard-52"])
            #expect(back.status == .ok && back.body["mfa_required"] == nil && back.string("access_token") != nil)
        }
    }

    @Test("recovery codes the stolen session replaced, TOTP on for days before, are the intruder's: the revert turns TOTP off")
    func revertRecoveryCodesOfStolenSession() async throws {
        try await TwoFactorEndpointTests().withApp { client, providers in
            let db = providers.db
            let twoFactor = TwoFactorEndpointTests()
            let first = try await owner(client, db)
            let secret = try await twoFactor.enrol(client, db, token: first, grant: try await passwordGrant(client, token: first)).secret
            // Days later, the owner signs in again (both factors): the session that gets stolen.
            db.clock.advance(by: 5 * 86_400)
            let challenge = try twoFactor.mfaToken(
                try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"]))
            let stolen = try #require(
                try await twoFactor.verify(client, challenge, code: try twoFactor.code(secret, db)).string("access_token"))
            db.clock.advance(by: 60)
            #expect(
                try await call(
                    client, .post, "/me/mfa/recovery-codes", token: stolen, reauth: try await passwordGrant(client, token: stolen)
                ).status == .ok)
            db.clock.advance(by: 60)
            let reverted = try await moveAndRevert(client, db, from: stolen)
            #expect(reverted.status == .ok && reverted.body["two_factor_reset"] as? Bool == true)
        }
    }

    @Test("a phone-first squatter's add-with-password claims nothing: the owner signs up, and the squatter's link is theirs to ignore")
    func phoneFirstSquatter() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let squatter = try await phoneSignIn(client, db, "+995511200377")
                let grant = try await phoneGrant(client, db, token: squatter, phone: "+995511200377")
                let claimed = try await call(
                    client, .post, "/auth/email/add-with-password", ["email": "ana@example.com", "password": "copper-lantern-77"],
                    token: squatter, reauth: grant)
                #expect(claimed.status == .accepted)
                let hub = try await call(client, .get, "/me/auth-methods", token: squatter)
                #expect(hub.body["email"] is NSNull && hub.string("pending_email") == "ana@example.com")
                // The owner signs up with their address at once; the link that went to it is the
                // owner's, and confirming it would only prove the address for whoever reads that mail.
                let owner = try await signUp(client, email: "ana@example.com")
                _ = try await emailLinkGrant(client, db, token: owner)
                let link = try #require(try await outboxMessage(db, template: "email_add_confirm").token)
                let confirmed = try await call(client, .post, "/auth/email/confirm-change", ["token": link])
                #expect(confirmed.status == .conflict && confirmed.string("error") == "email_taken")
                #expect(try await call(client, .get, "/me/auth-methods", token: squatter).body["email"] is NSNull)
            }
        }
    }

    @Test("a reset of a never-verified address proves it and removes every other way in (a squatter's Google, TOTP): the answer says so")
    func resetProvesAddress() async throws {
        try await ProviderEndpointTests().withApp { client, providers in
            let db = providers.db
            // A squatter registered ana@ and attached their own Google through a link token.
            _ = try await signUp(client, email: "ana@example.com")
            let required = try await call(
                client, .post, "/auth/google",
                ["id_token": try await providers.googleToken("g-squat", email: "ana@example.com", verified: true)])
            #expect(required.string("error") == "link_required")
            let linked = try await call(
                client, .post, "/auth/email/login",
                ["email": "ana@example.com", "password": "violet-harbor-91", "link_token": try #require(required.string("link_token"))])
            #expect(linked.status == .ok)
            // The address's owner resets the password: the address is proven, the squatter's Google goes.
            #expect(try await call(client, .post, "/auth/password/forgot", ["email": "ana@example.com"]).status == .accepted)
            let reset = try await call(
                client, .post, "/auth/password/reset",
                ["token": try await outboxToken(db, template: "password_reset"), "new_password": "amber-orchard-52"])
            #expect(reset.status == .ok && reset.body["removed_methods"] as? [String] == ["google"])
            #expect(reset.body["two_factor_reset"] as? Bool == false)
            let owner = try await logIn(client, email: "ana@example.com", password: "amber-orchard-52")
            let hub = try await call(client, .get, "/me/auth-methods", token: owner)
            #expect(hub.body["email_verified"] as? Bool == true && hub.body["google_linked"] as? Bool == false)
            // A reset of a verified address removes nothing.
            db.clock.advance(by: 30)
            #expect(try await call(client, .post, "/auth/password/forgot", ["email": "ana@example.com"]).status == .accepted)
            let again = try await call(
                client, .post, "/auth/password/reset",
                ["token": try await outboxToken(db, template: "password_reset"), "new_password": "rowan-meadow-38"])
            #expect(again.body["removed_methods"] as? [String] == [] && again.body["two_factor_reset"] as? Bool == false)
        }
    }

    @Test("a stranger's add-with-password confirmed from the owner's mailbox never strips the owner's only way in")
    func confirmationNeverStripsTheClicker() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                // The owner signed up with ana@ and has not verified it yet.
                let owner = try await signUp(client, email: "ana@example.com")
                let stranger = try await phoneSignIn(client, db, "+995511200366")
                let grant = try await phoneGrant(client, db, token: stranger, phone: "+995511200366")
                #expect(
                    try await call(
                        client, .post, "/auth/email/add-with-password", ["email": "ana@example.com", "password": "copper-lantern-77"],
                        token: stranger, reauth: grant
                    ).status == .accepted)
                // The owner clicks the link that landed in their mailbox: the address stays theirs.
                let link = try #require(try await outboxMessage(db, template: "email_add_confirm").token)
                let clicked = try await call(client, .post, "/auth/email/confirm-change", ["token": link])
                #expect(clicked.status == .conflict && clicked.string("error") == "email_taken")
                #expect(try await call(client, .get, "/me/auth-methods", token: owner).string("email") == "ana@example.com")
                #expect(try await call(client, .get, "/me/auth-methods", token: stranger).body["email"] is NSNull)
            }
        }
    }

    @Test("an address the account removed is held from others, not from itself; each of its contacts hears of every change")
    func heldForOthersOnly() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let grant = try await passwordGrant(client, token: access)
                #expect(try await call(client, .delete, "/me/auth-methods/email", token: access, reauth: grant).status == .ok)
                let phoneGrant = try await phoneGrant(client, db, token: access, phone: "+995511200300")
                db.clock.advance(by: 30)
                let back = try await call(
                    client, .post, "/auth/email/add-with-password", ["email": "ana@example.com", "password": "amber-orchard-52"],
                    token: access, reauth: phoneGrant)
                #expect(back.status == .accepted)
                let confirm = try #require(try await outboxMessage(db, template: "email_add_confirm").token)
                #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": confirm]).status == .ok)
                // Now both the address and the phone are the account's: removing the phone tells both.
                let grantAgain = try await passwordGrant(client, token: access, password: "amber-orchard-52")
                #expect(try await call(client, .delete, "/me/auth-methods/phone", token: access, reauth: grantAgain).status == .ok)
                let told = try await db.queuedMessages(template: "method_removed").filter { $0.details?["method"] == "phone" }
                #expect(told.map(\.to).sorted() == ["+995511200300", "ana@example.com"])
            }
        }
    }
}
