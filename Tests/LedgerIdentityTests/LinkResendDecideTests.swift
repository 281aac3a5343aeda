import Foundation
import LedgerIdentity
import Testing

@Suite("decide: the email links' resend countdown and window")
struct LinkResendDecideTests {
    let start = Date(timeIntervalSince1970: 1_790_000_000)

    func send(_ state: AccountState, at time: Date, policy: LinkResendPolicy = Policies.standard.linkResend) throws -> AccountState {
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: time.addingTimeInterval(1800), tokenHash: "t")
        var policies = Policies.standard
        policies.linkResend = policy
        return try decide(state, .sendVerificationLink(link), DecisionContext(now: time, policies: policies))
            .reduce(state) { evolve($0, $1, at: time) }
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

    @Test("resend_after after a send: the countdown, then the rest of the window once its resends are spent")
    func resendAfter() throws {
        let policy = Policies.standard.linkResend
        var state = AccountState(accountID: UUID())
        state = evolve(state, .registered(.init(email: "ana@example.com", displayName: nil, method: "email")), at: start)
        #expect(state.linkResendAfter(.verifyEmail, policy: policy, now: start) == 0)
        state = try send(state, at: start)
        #expect(state.linkResendAfter(.verifyEmail, policy: policy, now: start) == 30)
        for second in [30.0, 60] { state = try send(state, at: start.addingTimeInterval(second)) }
        #expect(state.linkResendAfter(.verifyEmail, policy: policy, now: start.addingTimeInterval(60)) == 30)
        state = try send(state, at: start.addingTimeInterval(90))
        // The third resend: the next send waits for the window, not 30 s.
        #expect(state.linkResendAfter(.verifyEmail, policy: policy, now: start.addingTimeInterval(90)) == 810)
        // Other purposes count on their own.
        #expect(state.linkResendAfter(.passwordReset, policy: policy, now: start.addingTimeInterval(90)) == 0)
    }

    @Test("the countdown and the limit are the configuration's (LEDGER_LINK_RESEND_*), not fixed")
    func configured() throws {
        let policy = LinkResendPolicy(interval: 0, limit: 1, window: 60)
        var state = AccountState(accountID: UUID())
        state = evolve(state, .registered(.init(email: "ana@example.com", displayName: nil, method: "email")), at: start)
        state = try send(state, at: start, policy: policy)
        state = try send(state, at: start, policy: policy)
        #expect(throws: IdentityError.self) { try send(state, at: start.addingTimeInterval(59), policy: policy) }
        state = try send(state, at: start.addingTimeInterval(60), policy: policy)
        // A window of a day is kept whole by the fold, which reads no configuration.
        let daily = LinkResendPolicy(interval: 0, limit: 0, window: LinkResendPolicy.longestWindow)
        state = try send(state, at: start.addingTimeInterval(90_000), policy: daily)
        state = try send(state, at: start.addingTimeInterval(90_001), policy: policy)
        #expect(state.linkResendAfter(.verifyEmail, policy: daily, now: start.addingTimeInterval(90_000 + 86_000)) == 401)
    }
}
