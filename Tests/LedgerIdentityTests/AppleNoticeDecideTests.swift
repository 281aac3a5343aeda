import Foundation
import LedgerIdentity
import Testing

@Suite("decide: Apple's server-to-server notifications")
struct AppleNoticeDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let session = UUID()

    func account(password: Bool) -> AccountState {
        var events: [AccountEvent] = [
            .registered(.init(email: password ? "ana@example.com" : nil, displayName: nil, method: "apple")),
            .providerLinked(.init(provider: .apple, subject: "a-1", email: nil, emailVerified: false)),
            .sessionStarted(
                .init(
                    sessionID: session, method: "apple", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
        ]
        if password { events.insert(.passwordSet(.init(passwordHash: "h", reason: .signup)), at: 1) }
        return events.reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
    }

    func notice(_ kind: AppleNotice.Kind, id: String = "n-1", subject: String = "a-1") -> AccountCommand {
        .handleAppleNotification(AppleNotice(id: id, kind: kind, subject: subject, eventTime: now, purgeDelay: 100, cooldown: 50))
    }

    @Test("consent-revoked: sessions end; Apple goes unless it is the only way in; once per id; another Apple ID is nothing")
    func consentRevoked() throws {
        let only = account(password: false)
        let onlyAfter = try decide(only, notice(.consentRevoked), now: now).reduce(only) { evolve($0, $1, at: now) }
        #expect(onlyAfter.providerSubjects[.apple] == "a-1" && onlyAfter.sessions[session]?.isActive == false)
        #expect(try decide(onlyAfter, notice(.consentRevoked), now: now).isEmpty)
        #expect(try decide(only, notice(.consentRevoked, subject: "a-2"), now: now).isEmpty)

        let both = account(password: true)
        let events = try decide(both, notice(.consentRevoked), now: now)
        #expect(events.map(\.type).prefix(3) == ["apple.notification_received", "provider.unlinked", "session.revoked"])
    }

    @Test("account-delete: the deletion as if asked; with a live hold, disabled instead, the reason naming the hold's kind")
    func accountDelete() throws {
        let state = account(password: false)
        let deleted = try decide(state, notice(.accountDelete), now: now).reduce(state) { evolve($0, $1, at: now) }
        #expect(deleted.isDeleted && deleted.purgeAfter == now.addingTimeInterval(100))

        let held = evolve(state, .holdPlaced(Hold(ref: "p", kind: .pendingPayout)), at: now)
        let events = try decide(held, notice(.accountDelete), now: now)
        #expect(events.contains(.accountDisabled(.init(reason: "apple_account_deleted; deletion blocked by pending_payout"))))
        #expect(events.contains(.deletionRequested(.init(by: "apple", blockedBy: [.pendingPayout]))))
        let after = events.reduce(held) { evolve($0, $1, at: now) }
        #expect(after.isDisabled && !after.isDeleted && after.sessions[session]?.isActive == false)
        // An operator cannot reopen it to its other sign-in methods while the deletion waits.
        #expect(throws: IdentityError.self) { try decide(after, .enableAccount, now: now) }

        // Scheduled once nothing blocks it any more, and only then.
        let complete = AccountCommand.completeRequestedDeletion(purgeDelay: 100, cooldown: 50, cooldownKeys: [])
        #expect(try decide(after, complete, now: now).isEmpty)
        let released = evolve(after, .holdReleased(.init(ref: "p")), at: now)
        let scheduled = try decide(released, complete, now: now).reduce(released) { evolve($0, $1, at: now) }
        #expect(scheduled.isDeleted)
        #expect(try decide(state, complete, now: now).isEmpty)  // never asked for: nothing
    }
}
