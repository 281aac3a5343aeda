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
            session.accountID, Hold(ref: "session-1", kind: .upcomingSession, startsAt: fixture.clock.now(), keyID: "key-a"))

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
}
