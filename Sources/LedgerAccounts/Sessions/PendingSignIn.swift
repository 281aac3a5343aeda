import Foundation
import LedgerCore
import LedgerIdentity

/// A sign-in made ready for either outcome before its command runs: the session's tokens for an
/// account that lets it in, and a second-factor challenge for one with two-factor
/// authentication on (`decide` picks). Every sign-in path (password, phone code, Apple, Google)
/// goes through it, so none can skip the second factor.
struct PendingSignIn: Sendable {
    let sessionID = UUID.random()
    let tokens: IssuedTokens
    let secret: [UInt8]
    private(set) var challenge: AccountCommand.NewChallenge

    /// - Parameters:
    ///   - linkToken: a provider `link_token` the sign-in carries, linked after the second factor.
    ///   - providerToken: the refresh token a provider sign-in fetched: kept after the second
    ///     factor, and revoked (a revocation parked in the outbox until the challenge's end) if
    ///     it is never passed.
    init(linkToken: String?, providerToken: AccountState.ProviderToken? = nil, now: Date, policies: Policies) throws {
        tokens = try IssuedTokens.issue(now: now, policies: policies)
        (secret, challenge) = try MFAChallengeToken.issue(linkToken: linkToken, now: now, lifetime: policies.mfaChallengeLifetime)
        if let providerToken {
            challenge.providerToken = providerToken
            challenge.parkedRevocationID = UUID.random()
        }
    }

    func newSession(method: String, device: String?, deviceID: UUID, locale: String?) -> AccountCommand.NewSession {
        AccountCommand.NewSession(
            sessionID: sessionID, method: method, device: device, tokens: tokens.hashes, stepUp: challenge, deviceID: deviceID,
            locale: locale)
    }

    /// Whether the command issued the challenge instead of starting the session.
    static func isChallenged(_ events: [AccountEvent]) -> Bool {
        events.contains { if case .mfaChallengeIssued = $0 { true } else { false } }
    }

    /// The session the command started; `MFARequired` when it issued the challenge instead.
    func session(_ state: AccountState, _ events: [AccountEvent], environment: AccountsEnvironment) async throws -> AccountService.Session {
        guard !Self.isChallenged(events) else {
            throw MFARequired(
                token: MFAChallengeToken(accountID: state.accountID, challengeID: challenge.challengeID, secret: secret).text,
                accountID: state.accountID)
        }
        return try await environment.session(state, sessionID, tokens)
    }
}
