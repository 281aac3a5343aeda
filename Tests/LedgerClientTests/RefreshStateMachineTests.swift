import Foundation
import LedgerClient
import Testing

@Suite("The session's refresh state machine")
struct RefreshStateMachineTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func tokens(_ name: String, endingIn seconds: TimeInterval) -> SessionTokens {
        SessionTokens(
            accountID: "a", sessionID: "s", accessToken: "access-\(name)", refreshToken: "refresh-\(name)",
            accessTokenExpiresAt: start.addingTimeInterval(seconds), deviceToken: "d")
    }

    @Test("a token far from its end is used as it is; near its end, one refresh for every waiting call")
    func oneRefreshInFlight() {
        var machine = RefreshStateMachine(tokens: Self.tokens("one", endingIn: 900), margin: 60)
        #expect(machine.tokenNeeded(by: 0, now: Self.start) == .use("access-one"))
        let nearEnd = Self.start.addingTimeInterval(850)
        #expect(machine.tokenNeeded(by: 1, now: nearEnd) == .refresh("refresh-one"))
        for waiter in 2...9 { #expect(machine.tokenNeeded(by: RefreshStateMachine.WaiterID(waiter), now: nearEnd) == .wait) }
        let refreshed = Self.tokens("two", endingIn: 1800)
        #expect(machine.refreshSucceeded(refreshed, sentWith: "refresh-one") == .resume(Array(2...9), accessToken: "access-two"))
        #expect(machine.tokenNeeded(by: 10, now: nearEnd) == .use("access-two"))
        #expect(machine.tokens == refreshed)
        // A late second outcome changes nothing, and is said to be late: its tokens are not stored.
        #expect(machine.refreshSucceeded(Self.tokens("three", endingIn: 1800), sentWith: "refresh-one") == .overtaken)
        #expect(machine.tokens == refreshed)
    }

    @Test("a refused refresh ends the session and fails the waiters; a passing failure keeps the tokens")
    func failures() {
        let old = Self.tokens("one", endingIn: 10)
        var machine = RefreshStateMachine(tokens: old, margin: 60)
        #expect(machine.tokenNeeded(by: 1, now: Self.start) == .refresh("refresh-one"))
        #expect(machine.tokenNeeded(by: 2, now: Self.start) == .wait)
        #expect(machine.refreshFailed(sessionEnded: false, sentWith: "refresh-one") == .fail([2], signedOut: false))
        #expect(machine.tokens == old)
        #expect(machine.tokenNeeded(by: 3, now: Self.start) == .refresh("refresh-one"))
        #expect(machine.refreshFailed(sessionEnded: true, sentWith: "refresh-one") == .none)
        #expect(machine.tokens == nil)
        #expect(machine.tokenNeeded(by: 4, now: Self.start) == .signedOut)
    }

    @Test("a sign-in during a refresh hands its tokens to the waiters; a sign-out fails them")
    func signInAndOutDuringRefresh() {
        var machine = RefreshStateMachine(tokens: Self.tokens("one", endingIn: 0), margin: 60)
        #expect(machine.tokenNeeded(by: 1, now: Self.start) == .refresh("refresh-one"))
        #expect(machine.tokenNeeded(by: 2, now: Self.start) == .wait)
        #expect(machine.signedIn(Self.tokens("new", endingIn: 900)) == .resume([2], accessToken: "access-new"))
        // The refresh sent before the sign-in answers late: overtaken, not stored.
        #expect(machine.refreshSucceeded(Self.tokens("stale", endingIn: 900), sentWith: "refresh-one") == .overtaken)
        #expect(machine.tokens?.accessToken == "access-new")
        #expect(machine.tokenNeeded(by: 3, now: Self.start.addingTimeInterval(880)) == .refresh("refresh-new"))
        #expect(machine.tokenNeeded(by: 4, now: Self.start) == .wait)
        #expect(machine.signedOut() == .fail([4], signedOut: true))
        #expect(machine.refreshFailed(sessionEnded: true, sentWith: "refresh-new") == .overtaken)
        #expect(machine.tokens == nil)
    }
}
