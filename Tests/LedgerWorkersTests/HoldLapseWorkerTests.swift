import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCrypto
import LedgerIdentity
import LedgerTestSupport
import LedgerWorkers
import Testing

@Suite("Hold lapse worker", .timeLimit(.minutes(10)))
struct HoldLapseWorkerTests {
    @Test("a session or booking hold lapses with hold.lapsed once it starts, once across workers; payouts and disputes never")
    func lapse() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let accounts = AccountService(environment: try db.accountsEnvironment(store))
            let session = try await accounts.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let now = db.clock.now()
            for hold in [
                Hold(ref: "session-1", kind: .upcomingSession, startsAt: now.addingTimeInterval(60)),
                Hold(ref: "booking-1", kind: .upcomingBooking, startsAt: now.addingTimeInterval(3600)),
                Hold(ref: "payout-1", kind: .pendingPayout, releasesAt: now.addingTimeInterval(30)),
                Hold(ref: "dispute-1", kind: .dispute, startsAt: now.addingTimeInterval(30)),
            ] {
                try await accounts.placeHold(session.accountID, hold)
            }
            let due = try await db.client.query("SELECT ref FROM hold_lapses ORDER BY lapses_at")
            #expect(due.rows.compactMap { $0.string(0) } == ["session-1", "booking-1"])
            let workers = (0..<4).map { _ in HoldLapseWorker(client: db.client, accounts: accounts, clock: db.clock) }
            #expect(try await workers[0].runOnce() == 0)

            db.clock.advance(by: 61)
            // Four instances at once: one hold.lapsed, whoever wins.
            let lapsed = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in workers { group.addTask { try await worker.runOnce() } }
                return try await group.reduce(0, +)
            }
            #expect(lapsed == 1)
            let events = try await store.readStream(session.accountID).filter { $0.type == "hold.lapsed" }
            #expect(events.count == 1)
            #expect(try await db.client.query("SELECT ref FROM hold_lapses").rows.compactMap { $0.string(0) } == ["booking-1"])

            // A day on: the booking lapses too; the payout, past its release, and the dispute stand.
            db.clock.advance(by: 86_400)
            #expect(try await workers[1].runOnce() == 1)
            #expect(try await db.client.query("SELECT count(*) FROM hold_lapses")[0].int(0) == 0)
            let blockers = try await accounts.deletionPreflight(session.accountID)
            #expect(blockers.map(\.kind) == [.pendingPayout, .dispute])
            #expect(try await accounts.account(session.accountID).holds.keys.sorted() == ["dispute-1", "payout-1"])
        }
    }
}
