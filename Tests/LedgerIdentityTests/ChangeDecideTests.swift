import Foundation
import LedgerIdentity
import Testing

@Suite("decide: password and email changes")
struct ChangeDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let current = UUID()
    let other = UUID()

    func account() throws -> AccountState {
        var state = AccountState(accountID: UUID())
        let events: [AccountEvent] = [
            .registered(.init(email: "ana@example.com", displayName: nil, method: "email")),
            .passwordSet(.init(passwordHash: "h0", reason: "signup")),
            .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
        ] + [current, other].map {
            .sessionStarted(.init(
                sessionID: $0, method: "email", device: nil, accessTokenHash: "a\($0)", refreshTokenHash: "r\($0)",
                accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000)))
        } + [.reauthGranted(.init(grantID: UUID(), sessionID: current, method: "phone", tokenHash: "g", expiresAt: now.addingTimeInterval(900)))]
        for event in events { state = evolve(state, event, at: now) }
        return state
    }

    func fold(_ state: AccountState, _ events: [AccountEvent]) -> AccountState {
        events.reduce(state) { evolve($0, $1, at: now) }
    }

    @Test("a password change needs the grant and revokes exactly the other sessions")
    func passwordChange() throws {
        let state = try account()
        #expect(throws: IdentityError.reauthRequired) {
            try decide(state, .changePassword(newPasswordHash: "h1", sessionID: current, reauthTokenHash: nil), now: now)
        }
        let events = try decide(state, .changePassword(newPasswordHash: "h1", sessionID: current, reauthTokenHash: "g"), now: now)
        #expect(events == [.passwordSet(.init(passwordHash: "h1", reason: "change")), .sessionRevoked(.init(sessionID: other, reason: "password_changed"))])
        let after = fold(state, events)
        #expect(after.sessions[current]?.isActive == true && after.sessions[other]?.isActive == false)
    }

    @Test("an email change applies only through its link, and the revert link restores the address and ends every session")
    func emailChange() throws {
        let state = try account()
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "t")
        let requested = fold(state, try decide(
            state, .requestEmailChange(EmailAddress("new@example.com")!, link: link, sessionID: current, reauthTokenHash: "g"), now: now))
        #expect(requested.email == "ana@example.com")
        let revert = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(604_800), tokenHash: "r")
        #expect(throws: IdentityError.linkExpired) {
            try decide(requested, .confirmEmailChange(linkID: link.linkID, revertLink: revert), now: now.addingTimeInterval(1800))
        }
        let changed = fold(requested, try decide(requested, .confirmEmailChange(linkID: link.linkID, revertLink: revert), now: now))
        #expect(changed.email == "new@example.com" && changed.emailVerified)
        #expect(throws: IdentityError.linkExpired) { try decide(changed, .confirmEmailChange(linkID: link.linkID, revertLink: revert), now: now) }
        let reverted = fold(changed, try decide(changed, .revertEmail(linkID: revert.linkID), now: now.addingTimeInterval(604_799)))
        #expect(reverted.email == "ana@example.com")
        #expect(reverted.sessions.values.allSatisfy { !$0.isActive })
        #expect(throws: IdentityError.linkExpired) { try decide(reverted, .revertEmail(linkID: revert.linkID), now: now) }
    }

    @Test("email and password are added only to an account without an email")
    func addEmail() throws {
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800))
        #expect(throws: IdentityError.self) {
            try decide(try account(), .addEmailAndPassword(EmailAddress("b@example.com")!, passwordHash: "h", verificationLink: link), now: now)
        }
        var phoneOnly = AccountState(accountID: UUID())
        phoneOnly = evolve(phoneOnly, .registered(.init(email: nil, displayName: nil, method: "phone")), at: now)
        let after = fold(phoneOnly, try decide(
            phoneOnly, .addEmailAndPassword(EmailAddress("b@example.com")!, passwordHash: "h", verificationLink: link), now: now))
        #expect(after.email == "b@example.com" && after.hasPassword && !after.emailVerified && after.signInMethods == [.password])
    }

    @Test("deletion: never without a grant, blocked by holds, then every session ends and nothing more is accepted")
    func deletion() throws {
        let state = try account()
        let delete = AccountCommand.deleteAccount(sessionID: current, reauthTokenHash: "g", purgeDelay: 2_592_000, cooldown: 604_800, cooldownKeys: ["k"])
        #expect(throws: IdentityError.reauthRequired) {
            try decide(state, .deleteAccount(sessionID: current, reauthTokenHash: nil, purgeDelay: 1, cooldown: 1, cooldownKeys: []), now: now)
        }
        let held = fold(state, try decide(state, .placeHold(Hold(ref: "p", kind: .pendingPayout)), now: now))
        #expect(throws: DeletionBlocked.self) { try decide(held, delete, now: now) }
        let deleted = fold(state, try decide(state, delete, now: now))
        #expect(deleted.isDeleted && deleted.purgeAfter == now.addingTimeInterval(2_592_000))
        #expect(deleted.sessions.values.allSatisfy { !$0.isActive })
        #expect(throws: IdentityError.accountDeleted) { try decide(deleted, .placeHold(Hold(ref: "p", kind: .dispute)), now: now) }
        #expect(throws: IdentityError.self) { try decide(deleted, delete, now: now) }
    }
}
