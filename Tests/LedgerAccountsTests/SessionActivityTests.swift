import Foundation
import LedgerAccounts
import Testing

@Suite("Session activity: uses noted, written on the writer's beat, at most once a minute")
struct SessionActivityTests {
    @Test("a use is written by settle, not by the request; a second use within the minute adds nothing")
    func notedThenWritten() async throws {
        let world = try InMemoryAccounts()
        let signedUp = try await world.signedUp()
        await world.accounts.activity.settle()
        func lastUsed() async throws -> Date? {
            try await world.accounts.liveSessions(accessToken: signedUp.accessToken)?.sessions.first?.lastUsedAt
        }
        let created = try await lastUsed()
        world.clock.advance(by: 120)
        let used = world.clock.now()
        // Reading the sessions screen is itself a use, noted but not written yet.
        #expect(try await lastUsed() == created)
        await world.accounts.activity.settle()
        #expect(try await lastUsed() == used)
        // Within the minute another use is not even noted.
        world.clock.advance(by: 30)
        _ = try await lastUsed()
        await world.accounts.activity.settle()
        #expect(try await lastUsed() == used)
    }
}
