import Foundation

/// When a session refreshes its tokens, as a pure state machine (in the style of postgres-nio's
/// `PoolStateMachine`): each event returns the action its owner (`TokenKeeper`) performs, so
/// the rules test without a network. However many calls need a token while it is near its end,
/// exactly one refresh is in flight; the others wait for its outcome.
public struct RefreshStateMachine: Sendable {
    /// Identifies a call waiting for a token.
    public typealias WaiterID = UInt64

    enum State: Sendable, Hashable {
        case signedOut
        case signedIn(SessionTokens)
        case refreshing(SessionTokens, waiters: [WaiterID])
    }

    /// What to do for a call that needs an access token.
    public enum TokenAction: Sendable, Hashable {
        /// Send this access token.
        case use(String)
        /// This call refreshes with this refresh token, then reports `refreshSucceeded` or `refreshFailed`.
        case refresh(String)
        /// Park the call until the refresh in flight ends.
        case wait
        /// No session: send the call without a token (or fail it).
        case signedOut
    }

    /// What to do with the calls parked while a refresh was in flight.
    public enum WaitersAction: Sendable, Hashable {
        /// Nobody waited.
        case none
        /// Resume them with this access token.
        case resume([WaiterID], accessToken: String)
        /// Fail them; `signedOut` says whether the session ended.
        case fail([WaiterID], signedOut: Bool)
        /// The refresh's outcome came after a sign-in, a sign-out or another refresh: nothing of
        /// it is kept (storing its tokens would bring back a session the device has left).
        case overtaken
    }

    private(set) var state: State
    /// How long before its end an access token is refreshed rather than sent.
    public let margin: TimeInterval

    /// A machine in the state `tokens` give (signed out when nil).
    public init(tokens: SessionTokens?, margin: TimeInterval = 60) {
        state = tokens.map(State.signedIn) ?? .signedOut
        self.margin = margin
    }

    /// The tokens the session has now, if any.
    public var tokens: SessionTokens? {
        switch state {
        case .signedOut: nil
        case .signedIn(let tokens), .refreshing(let tokens, _): tokens
        }
    }

    /// Call `waiter` needs an access token at `now`.
    public mutating func tokenNeeded(by waiter: WaiterID, now: Date) -> TokenAction {
        switch state {
        case .signedOut:
            return .signedOut
        case .signedIn(let tokens):
            guard tokens.accessTokenExpiresAt.timeIntervalSince(now) <= margin else { return .use(tokens.accessToken) }
            state = .refreshing(tokens, waiters: [])
            return .refresh(tokens.refreshToken)
        case .refreshing(let tokens, var waiters):
            waiters.append(waiter)
            state = .refreshing(tokens, waiters: waiters)
            return .wait
        }
    }

    /// The refresh sent with `refreshToken` answered `tokens`; `.overtaken` when a sign-in, a
    /// sign-out or another refresh came first.
    public mutating func refreshSucceeded(_ tokens: SessionTokens, sentWith refreshToken: String) -> WaitersAction {
        guard case .refreshing(let current, let waiters) = state, current.refreshToken == refreshToken else { return .overtaken }
        state = .signedIn(tokens)
        return waiters.isEmpty ? .none : .resume(waiters, accessToken: tokens.accessToken)
    }

    /// The refresh sent with `refreshToken` failed: `sessionEnded` when the service refused it
    /// (the session is over), else a failure that may pass (the tokens are kept and the next
    /// call tries again); `.overtaken` when a sign-in, a sign-out or another refresh came first.
    public mutating func refreshFailed(sessionEnded: Bool, sentWith refreshToken: String) -> WaitersAction {
        guard case .refreshing(let tokens, let waiters) = state, tokens.refreshToken == refreshToken else { return .overtaken }
        state = sessionEnded ? .signedOut : .signedIn(tokens)
        return waiters.isEmpty ? .none : .fail(waiters, signedOut: sessionEnded)
    }

    /// A sign-in (or a link that signs in) answered `tokens`; calls parked behind a refresh use them.
    public mutating func signedIn(_ tokens: SessionTokens) -> WaitersAction {
        let waiters: [WaiterID]
        if case .refreshing(_, let parked) = state { waiters = parked } else { waiters = [] }
        state = .signedIn(tokens)
        return waiters.isEmpty ? .none : .resume(waiters, accessToken: tokens.accessToken)
    }

    /// The session ended on this device; parked calls fail.
    public mutating func signedOut() -> WaitersAction {
        let waiters: [WaiterID]
        if case .refreshing(_, let parked) = state { waiters = parked } else { waiters = [] }
        state = .signedOut
        return waiters.isEmpty ? .none : .fail(waiters, signedOut: true)
    }
}
