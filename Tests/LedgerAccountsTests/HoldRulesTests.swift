import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

/// Holds that block a deletion, over the in-memory repository.
@Suite("Holds and deletion, in memory")
struct HoldRulesTests {
    @Test("a hold is idempotent per ref and its key's: another key's ref is not_found, an admin release clears it")
    func ownership() async throws {
        let fixture = try InMemoryAccounts()
        let session = try await fixture.signUp()
        let account = session.accountID
        let hold = Hold(ref: "booking-1", kind: .upcomingBooking, startsAt: fixture.clock.now().addingTimeInterval(86_400), keyID: "key-a")
        try await fixture.accounts.placeHold(account, hold)
        let version = try await fixture.repository.load(account).version
        try await fixture.accounts.placeHold(account, hold)
        #expect(try await fixture.repository.load(account).version == version)

        await expectIdentityError(.notFound) {
            try await fixture.accounts.placeHold(account, Hold(ref: "booking-1", kind: .dispute, keyID: "key-b"))
        }
        await expectIdentityError(.notFound) { try await fixture.accounts.releaseHold(account, ref: "booking-1", keyID: "key-b") }
        try await fixture.accounts.releaseHold(account, ref: "no-such-hold", keyID: "key-b")
        #expect(try await fixture.repository.load(account).version == version)
        #expect(try await fixture.accounts.deletionPreflight(account).map(\.kind) == [.upcomingBooking])

        try await fixture.accounts.releaseHold(account, ref: "booking-1", keyID: "key-b", administrator: true)
        #expect(try await fixture.accounts.deletionPreflight(account).isEmpty)
    }

    @Test("a hold blocks the deletion before re-auth is asked; once released, the deletion ends every session")
    func blocksDeletion() async throws {
        let fixture = try InMemoryAccounts()
        let session = try await fixture.signUp()
        let grant = try await fixture.passwordGrant(session)
        try await fixture.accounts.placeHold(session.accountID, Hold(ref: "payout-1", kind: .pendingPayout, keyID: "key-a"))
        try await fixture.accounts.placeHold(
            session.accountID,
            Hold(ref: "session-1", kind: .upcomingSession, startsAt: fixture.clock.now().addingTimeInterval(3600), keyID: "key-a"))

        for reauthToken in [nil, grant] {
            do {
                _ = try await fixture.accounts.deleteAccount(session, reauthToken: reauthToken)
                Issue.record("a deletion with holds went through")
            } catch let blocked as DeletionBlocked {
                #expect(blocked.blockers.map(\.kind) == [.upcomingSession, .pendingPayout])
            }
        }
        await expectIdentityError(.reauthRequired) {
            try await fixture.accounts.releaseHold(session.accountID, ref: "payout-1", keyID: "key-a")
            try await fixture.accounts.releaseHold(session.accountID, ref: "session-1", keyID: "key-a")
            return try await fixture.accounts.deleteAccount(session, reauthToken: nil)
        }
        let deleted = try await fixture.accounts.deleteAccount(session, reauthToken: grant)
        #expect(deleted.isDeleted && deleted.sessions.values.allSatisfy { !$0.isActive })
        #expect(try await fixture.accounts.deletionPreflight(session.accountID).isEmpty)
    }

    @Test("a started session or booking blocks nothing and lapses (hold.lapsed); payouts, disputes and undated holds still block")
    func lapse() async throws {
        let fixture = try InMemoryAccounts()
        let session = try await fixture.signUp()
        let now = fixture.clock.now()
        for hold in [
            Hold(ref: "s", kind: .upcomingSession, startsAt: now.addingTimeInterval(60)),
            Hold(ref: "b", kind: .upcomingBooking, startsAt: now.addingTimeInterval(120)),
            Hold(ref: "p", kind: .pendingPayout, releasesAt: now.addingTimeInterval(180)),
            Hold(ref: "p-undated", kind: .pendingPayout),
            Hold(ref: "d", kind: .dispute),
        ] {
            try await fixture.accounts.placeHold(session.accountID, hold)
        }
        func blocking() async throws -> [String] {
            try await fixture.accounts.deletionPreflight(session.accountID).flatMap { $0.items.map(\.ref) }
        }
        #expect(try await blocking() == ["s", "b", "p-undated", "p", "d"])
        #expect(try await fixture.accounts.lapseHolds(session.accountID) == 0)
        fixture.clock.advance(by: 60)
        #expect(try await blocking() == ["b", "p-undated", "p", "d"])
        #expect(try await fixture.accounts.lapseHolds(session.accountID) == 1)
        fixture.clock.advance(by: 120)
        // Money still pending when it can be withdrawn still has to be withdrawn: the payout stands.
        #expect(try await blocking() == ["p-undated", "p", "d"])
        #expect(try await fixture.accounts.lapseHolds(session.accountID) == 1)
        #expect(try await fixture.accounts.lapseHolds(session.accountID) == 0)
        let lapsed = try await fixture.repository.history(session.accountID).filter { $0.type == "hold.lapsed" }
        #expect(lapsed.count == 2)
        #expect(try await fixture.accounts.account(session.accountID).holds.keys.sorted() == ["d", "p", "p-undated"])
        for ref in ["p-undated", "p", "d"] { try await fixture.accounts.releaseHold(session.accountID, ref: ref, keyID: nil) }
        let grant = try await fixture.passwordGrant(session)
        #expect(try await fixture.accounts.deleteAccount(session, reauthToken: grant).isDeleted)
    }
}
