import Foundation
import LedgerCore
import LedgerIdentity

/// What the sign-in paths of every service share: the limits counted first, the tokens issued
/// under the policies, the session answered.
extension AccountsEnvironment {
    /// Counts a request under docs/architecture.md "Abuse limits" before the work it protects.
    func admit(_ work: RequestLimits.Work, client: String?, accountID: UUID?) async throws {
        try await limits.admit(work, client: client, accountID: accountID, now: clock.now())
    }

    /// One attempt admitted under each of `keys` (nil ones left out), or `TooManyAttempts`.
    func admit(_ keys: [LoginThrottle.Key?]) async throws -> LoginThrottle.Admission {
        try await throttle.admit(keys.compactMap { $0 }, now: clock.now())
    }

    /// A new access and refresh token, living as long as the policies say; with JWT access
    /// tokens, only once a key is ready to sign them (before the command commits).
    func issueTokens(now: Date) async throws -> IssuedTokens {
        try await accessTokens?.prepare()
        return try IssuedTokens.issue(now: now, policies: policies)
    }

    /// A sign-in made ready for either outcome (`PendingSignIn`), once a key is ready to sign its tokens.
    func pendingSignIn(linkToken: String?, providerToken: AccountState.ProviderToken? = nil) async throws -> PendingSignIn {
        try await accessTokens?.prepare()
        return try PendingSignIn(linkToken: linkToken, providerToken: providerToken, now: clock.now(), policies: policies)
    }

    /// The session a command started or refreshed, as the client gets it: with `jwt` access
    /// tokens, the access token is a JWT naming the hash the session keeps (never the opaque
    /// token itself, which no one then holds).
    func session(_ state: AccountState, _ sessionID: UUID, _ tokens: IssuedTokens) async throws -> AccountService.Session {
        var accessToken = tokens.accessToken
        if let accessTokens, accessTokens.settings.format == .jwt {
            guard let session = state.sessions[sessionID] else { throw IdentityError.sessionExpired }
            accessToken = try await accessTokens.sign(
                accessTokens.claims(
                    accountID: state.accountID, sessionID: sessionID, accessHash: IssuedTokens.tokenHash(tokens.accessToken),
                    authTime: session.createdAt,
                    methods: AccessTokenClaims.methods(signIn: session.method, secondFactor: session.secondFactor),
                    emailVerified: state.emailVerified,
                    // When the tokens were issued, not now: `exp - iat` is then `expires_in` to the
                    // second, however long the signing waited (a second boundary between them
                    // made it one short).
                    issuedAt: tokens.hashes.accessExpiresAt.addingTimeInterval(-policies.accessTokenLifetime),
                    expiresAt: tokens.hashes.accessExpiresAt))
        }
        return AccountService.Session(
            accountID: state.accountID, sessionID: sessionID, accessToken: accessToken,
            refreshToken: tokens.refreshToken, expiresIn: Int(policies.accessTokenLifetime),
            emailVerified: state.emailVerified,
            deviceToken: devices.token(for: state.sessions[sessionID]?.deviceID ?? sessionID, of: state.accountID))
    }

    /// The hash a presented access token is looked up by: an opaque token's SHA-256, or the
    /// `jti` of a JWT whose signature, issuer, audience and expiry check out; nil for a JWT that
    /// does not (no session is looked up for it).
    func accessHash(presented token: String) async -> [UInt8]? {
        guard JWTAccessTokens.looksLikeJWT(token) else { return IssuedTokens.tokenHash(token) }
        return await accessTokens?.accessHash(of: token)
    }

    /// The device a sign-in to `accountID` comes from: the one its `X-Device-Token` names when
    /// the token is this account's, else a new one.
    func deviceID(presented token: String?, of accountID: UUID) -> UUID {
        devices.deviceID(in: token, of: accountID) ?? UUID.random()
    }

    /// Ends one session (sign-out, a reused refresh token, a disconnect).
    func revoke(session: SessionRef, reason: String) async throws {
        _ = try await repository.execute(session.accountID) { _ in .revokeSession(sessionID: session.sessionID, reason: reason) }
    }
}

extension AccountsEnvironment {
    /// A "Verify it's you" grant proved by `method`, lasting `reauthGrantLifetime`.
    func issueReauthGrant(method: ReauthMethod) throws -> (token: String, grant: AccountCommand.NewGrant) {
        try ReauthGrantToken.issue(method: method, lifetime: policies.reauthGrantLifetime)
    }
}
