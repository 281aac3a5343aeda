import Foundation
import OpenAPIRuntime

/// Runs a session's `RefreshStateMachine`: performs the refresh it asks for (with a client that
/// has no session middleware), parks and resumes the calls it says wait, keeps the tokens in
/// the `TokenStorage`, and holds the session's live re-auth grant.
actor TokenKeeper {
    private var machine: RefreshStateMachine
    private var waiters: [RefreshStateMachine.WaiterID: CheckedContinuation<String, any Error>] = [:]
    private var nextWaiter: RefreshStateMachine.WaiterID = 0
    private var restoring: Task<Void, any Error>?
    private var grant: ReauthGrant?
    /// The device token of the latest session: kept after a sign-out, so the next sign-in on
    /// this device is not a new device (docs/api.md "Devices").
    private var device: String?
    let storage: any TokenStorage
    let refreshClient: Client
    let now: @Sendable () -> Date

    init(storage: any TokenStorage, refreshClient: Client, margin: TimeInterval, now: @escaping @Sendable () -> Date) {
        machine = RefreshStateMachine(tokens: nil, margin: margin)
        self.storage = storage
        self.refreshClient = refreshClient
        self.now = now
    }

    /// The tokens now (after reading the storage once).
    func tokens() async throws -> SessionTokens? {
        try await restoreIfNeeded()
        return machine.tokens
    }

    /// The device token to send as `X-Device-Token`.
    func deviceToken() async throws -> String? {
        try await restoreIfNeeded()
        return machine.tokens?.deviceToken ?? device
    }

    /// An access token good for at least the margin, refreshed first when needed; nil when signed out.
    func accessToken() async throws -> String? {
        try await restoreIfNeeded()
        let waiter = nextWaiter
        nextWaiter += 1
        switch machine.tokenNeeded(by: waiter, now: now()) {
        case .use(let token): return token
        case .signedOut: return nil
        case .wait: return try await withCheckedThrowingContinuation { waiters[waiter] = $0 }
        case .refresh(let refreshToken): return try await refresh(with: refreshToken)
        }
    }

    /// A sign-in answered `tokens`.
    func signedIn(_ tokens: SessionTokens) async throws {
        grant = nil
        device = tokens.deviceToken ?? device
        perform(machine.signedIn(tokens))
        try await storage.save(tokens)
    }

    /// The session ended here.
    func signedOut() async throws {
        grant = nil
        device = machine.tokens?.deviceToken ?? device
        perform(machine.signedOut())
        try await storage.save(nil)
    }

    /// Keeps a re-auth grant for the calls that need one, until the service says it ended
    /// (`expires_at` is the service's clock, which this device's may not match).
    func keep(_ grant: ReauthGrant?) { self.grant = grant }

    /// The kept grant's token, if any.
    var reauthToken: String? { grant?.token }

    private func restoreIfNeeded() async throws {
        if let restoring { return try await restoring.value }
        let task = Task {
            let stored = try await storage.load()
            if let stored, machine.tokens == nil { perform(machine.signedIn(stored)) }
        }
        restoring = task
        try await task.value
    }

    private func refresh(with refreshToken: String) async throws -> String {
        let sent = now()
        let outcome: Result<SessionTokens, LedgerClientError>
        do {
            switch try await refreshClient.refreshSession(body: .json(.init(refreshToken: refreshToken))) {
            case .ok(let answer): outcome = .success(SessionTokens(try answer.body.json, receivedAt: sent))
            case .unauthorized: outcome = .failure(LedgerClientError(.signedOut, "The session ended: sign in again."))
            default: outcome = .failure(LedgerClientError(.refreshFailed, "The refresh was not answered with a session."))
            }
        } catch {
            // Never `\(error)`: the generated client's errors quote the request, refresh token included.
            outcome = .failure(LedgerClientError(.refreshFailed, "The refresh failed (\(LedgerClientError.kind(of: error)))."))
        }
        switch outcome {
        case .success(let tokens):
            let action = machine.refreshSucceeded(tokens, sentWith: refreshToken)
            guard action != .overtaken else { return try overtaken() }
            perform(action)
            try await storage.save(tokens)
            return tokens.accessToken
        case .failure(let error):
            let ended = error.code == .signedOut
            let action = machine.refreshFailed(sessionEnded: ended, sentWith: refreshToken)
            guard action != .overtaken else { return try overtaken() }
            perform(action)
            if ended {
                grant = nil
                try await storage.save(nil)
            }
            throw error
        }
    }

    /// A refresh whose outcome came after a sign-in, a sign-out or another refresh: its call
    /// goes on with the session there is now, if any, and nothing of the outcome is stored.
    private func overtaken() throws -> String {
        guard let tokens = machine.tokens else { throw LedgerClientError(.signedOut, "The session ended: sign in again.") }
        return tokens.accessToken
    }

    private func perform(_ action: RefreshStateMachine.WaitersAction) {
        switch action {
        case .none, .overtaken: return
        case .resume(let ids, let accessToken):
            for id in ids { waiters.removeValue(forKey: id)?.resume(returning: accessToken) }
        case .fail(let ids, let signedOut):
            let error =
                signedOut
                ? LedgerClientError(.signedOut, "The session ended: sign in again.")
                : LedgerClientError(.refreshFailed, "The refresh failed; try again.")
            for id in ids { waiters.removeValue(forKey: id)?.resume(throwing: error) }
        }
    }
}
