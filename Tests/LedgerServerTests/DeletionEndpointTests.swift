import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: account deletion and the re-signup cooldown", .timeLimit(.minutes(10)))
struct DeletionEndpointTests {
    @Test("deletion: re-auth, blocked by holds, then sessions revoked, purge in 30 days, holds refused with 410")
    func deletion() async throws {
        try await MemoryBackend.with { db in
            let writer = try await db.apiKeys.create(name: "bookings", scopes: [.holdsWrite]).key
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let other = try await signIn(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let holdPath = "/accounts/\(accountID)/holds/s1"
                #expect(try await call(client, .delete, "/me", token: access).status == .forbidden)
                let reauth = try #require(
                    try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access).string(
                        "reauth_token"))
                _ = try await call(
                    client, .put, holdPath, ["kind": "upcoming_session", "starts_at": "2026-09-28T10:00:00Z", "title": "Padel"],
                    token: writer, path: "/accounts/{id}/holds/{ref}")
                // Blockers come before re-auth: no one verifies it's them for a deletion that cannot happen yet.
                #expect(try await call(client, .delete, "/me", token: access).string("error") == "deletion_blocked")
                let blocked = try await call(client, .delete, "/me", token: access, reauth: reauth)
                #expect(blocked.status == .conflict)
                #expect(blocked.string("error") == "deletion_blocked")
                #expect(((blocked.body["blockers"] as? [[String: Any]])?.first?["kind"] as? String) == "upcoming_session")
                _ = try await call(client, .delete, holdPath, token: writer, path: "/accounts/{id}/holds/{ref}")
                let deleted = try await call(client, .delete, "/me", token: access, reauth: reauth)
                #expect(deleted.status == .accepted)
                let deletedAt = try #require(deleted.string("deleted_at").flatMap(RFC3339Parse.date))
                let purgeAfter = try #require(deleted.string("purge_after").flatMap(RFC3339Parse.date))
                #expect(purgeAfter.timeIntervalSince(deletedAt) == 2_592_000)
                for token in [access, other] { #expect(try await call(client, .get, "/me", token: token).status == .unauthorized) }
                #expect(
                    try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"]).status
                        == .unauthorized)
                let late = try await call(client, .put, holdPath, ["kind": "dispute"], token: writer, path: "/accounts/{id}/holds/{ref}")
                #expect(late.status == .gone)
                #expect(late.string("error") == "account_deleted")
                // That no identifier is kept in the clear on the cooldown list: AtRestTests.cooldownKeyed.
            }
        }
    }

    @Test("the email and number of a deleted account may not sign up again until 7 days have passed")
    func cooldown() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let reauth = try #require(
                    try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access).string(
                        "reauth_token"))
                #expect(try await call(client, .delete, "/me", token: access, reauth: reauth).status == .accepted)
                db.clock.advance(by: 7 * 86400 - 3600)
                let email = try await call(
                    client, .post, "/auth/email/signup", ["email": "ana@example.com", "password": "violet-harbor-91"])
                #expect(email.status == .conflict)
                #expect(email.string("error") == "signup_cooldown")
                let phone = try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "sign_in"])
                #expect(phone.status == .conflict)
                #expect(phone.string("error") == "signup_cooldown")
                db.clock.advance(by: 3601)
                #expect(
                    try await call(client, .post, "/auth/email/signup", ["email": "ana@example.com", "password": "violet-harbor-91"]).status
                        == .created)
                #expect(
                    try await call(client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "sign_in"]).status
                        == .accepted)
            }
        }
    }

    @Test("an address the account never verified is not held at deletion: whoever registered it cannot lock its owner out")
    func unverifiedAddressNotHeld() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                // A squatter registers someone's address, never proves it, and deletes the account.
                let squatter = try await signUp(client, email: "ana@example.com")
                let reauth = try await passwordGrant(client, token: squatter)
                #expect(try await call(client, .delete, "/me", token: squatter, reauth: reauth).status == .accepted)
                // That nothing was listed: AtRestTests.cooldownKeyed.
                // The owner signs up at once.
                #expect(
                    try await call(client, .post, "/auth/email/signup", ["email": "ana@example.com", "password": "violet-harbor-91"]).status
                        == .created)
            }
        }
    }

    @Test("nor may another account add them, as an email or a phone, until 7 days have passed")
    func cooldownForOtherAccounts() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await accountWithPhone(client, db)
                let reauth = try #require(
                    try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access).string(
                        "reauth_token"))
                #expect(try await call(client, .delete, "/me", token: access, reauth: reauth).status == .accepted)
                _ = try await signUp(client, email: "bob@example.com")
                _ = try await phoneSignIn(client, db, "+995511200301")
                db.clock.advance(by: 7 * 86400 - 3600)
                // Sessions of the day (access tokens last 15 minutes).
                let bob = try await logIn(client, email: "bob@example.com")
                let bobGrant = try await emailLinkGrant(client, db, token: bob)
                let phoneOnly = try await phoneSignIn(client, db, "+995511200301")
                let phoneOnlyGrant = try await phoneGrant(client, db, token: phoneOnly, phone: "+995511200301")
                func messages(to recipient: String) async throws -> Int {
                    try await db.queuedMessages(template: nil).count { $0.to == recipient }
                }
                let sentBefore = try await messages(to: "ana@example.com")
                let textedBefore = try await messages(to: "+995511200300")
                let refusals = [
                    try await call(
                        client, .post, "/auth/email/add-with-password", ["email": "ana@example.com", "password": "amber-orchard-52"],
                        token: phoneOnly, reauth: phoneOnlyGrant),
                    try await call(
                        client, .post, "/auth/email/request-change", ["new_email": "Ana@Example.com"], token: bob, reauth: bobGrant),
                    try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "add_phone"], token: bob,
                        reauth: bobGrant),
                    // The number is that account's only method: no grant needed, and still refused.
                    try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "change_phone"], token: phoneOnly),
                ]
                for refusal in refusals {
                    #expect(refusal.status == .conflict)
                    #expect(refusal.string("error") == "signup_cooldown")
                    #expect(
                        refusal.string("message")
                            == "An account with this sign-in was deleted recently. You can sign up with it again 7 days after the deletion."
                    )
                }
                // Nothing was sent to the address, and no code to the number.
                #expect(try await messages(to: "ana@example.com") == sentBefore)
                #expect(try await messages(to: "+995511200300") == textedBefore)
                db.clock.advance(by: 3601)
                let fresh = try await logIn(client, email: "bob@example.com")
                let freshGrant = try await passwordGrant(client, token: fresh)
                #expect(
                    try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "add_phone"], token: fresh,
                        reauth: freshGrant
                    ).status == .accepted)
                let phoneAgain = try await phoneSignIn(client, db, "+995511200301")
                let phoneAgainGrant = try await phoneGrant(client, db, token: phoneAgain, phone: "+995511200301")
                #expect(
                    try await call(
                        client, .post, "/auth/email/add-with-password", ["email": "ana@example.com", "password": "amber-orchard-52"],
                        token: phoneAgain, reauth: phoneAgainGrant
                    ).status == .accepted)
            }
        }
    }
}

@Suite("HTTP: data export", .timeLimit(.minutes(10)))
struct ExportEndpointTests {
    @Test("the account's own events, decrypted, without secrets' hashes; only after the address is proven")
    func export() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let refused = try await call(client, .get, "/me/export", token: access)
                #expect(refused.status == .forbidden)
                #expect(refused.string("error") == "export_requires_verification")
                #expect(
                    try await call(client, .post, "/auth/email/verify", ["token": try await outboxToken(db, template: "verify_email")])
                        .status == .ok)
                let export = try await call(client, .get, "/me/export", token: access)
                #expect(export.status == .ok)
                let events = try #require(export.body["events"] as? [[String: Any]])
                #expect(events.first?["type"] as? String == "account.registered")
                #expect((events.first?["data"] as? [String: Any])?["email"] as? String == "ana@example.com")
                let text = String(decoding: try JSONSerialization.data(withJSONObject: events), as: UTF8.self)
                #expect(!text.contains("password_hash") && !text.contains("_sha256") && !text.contains("$scrypt$"))
                #expect(events.map { $0["version"] as? Int } == Array(1...events.count).map { $0 })
                // Ids in the data are in the case the rest of the API uses.
                let started = try #require(events.first { $0["type"] as? String == "session.started" }?["data"] as? [String: Any])
                let sessionID = try #require(started["session_id"] as? String)
                #expect(sessionID == sessionID.lowercased() && UUID(uuidString: sessionID) != nil)
                let phoneOnly = try await phoneSignIn(client, db, "+995511200300")
                #expect(try await call(client, .get, "/me/export", token: phoneOnly).status == .ok)
            }
        }
    }
}

enum RFC3339Parse {
    static func date(_ text: String) -> Date? { ISO8601DateFormatter().date(from: text) }
}
