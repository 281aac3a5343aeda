import Foundation
import LedgerIdentity
import Testing

@Suite("decide: the email links' resend countdown and window")
struct LinkResendDecideTests {
    let start = Date(timeIntervalSince1970: 1_790_000_000)

    func send(_ state: AccountState, at time: Date) throws -> AccountState {
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: time.addingTimeInterval(1800), tokenHash: "t")
        return try decide(state, .sendVerificationLink(link), now: time).reduce(state) { evolve($0, $1, at: time) }
    }

    func retryAfter(_ state: AccountState, at time: Date) -> Int? {
        do {
            _ = try send(state, at: time)
            return nil
        } catch let error as IdentityError {
            return error.code == .rateLimited ? error.retryAfter : -1
        } catch {
            return -1
        }
    }

    @Test("another link of one purpose 30 s after the last at the earliest; 4 in any 15 minutes")
    func countdown() throws {
        var state = AccountState(accountID: UUID())
        state = evolve(state, .registered(.init(email: "ana@example.com", displayName: nil, method: "email")), at: start)
        state = try send(state, at: start)
        #expect(retryAfter(state, at: start.addingTimeInterval(1)) == 29)
        #expect(retryAfter(state, at: start.addingTimeInterval(29.5)) == 1)
        for second in [30.0, 60, 90] { state = try send(state, at: start.addingTimeInterval(second)) }
        // Four sent since `start`: the fifth waits for the first to leave the 15-minute window.
        #expect(retryAfter(state, at: start.addingTimeInterval(120)) == 780)
        #expect(retryAfter(state, at: start.addingTimeInterval(900)) == nil)
    }
}
