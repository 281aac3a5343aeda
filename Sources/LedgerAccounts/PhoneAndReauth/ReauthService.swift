import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// "Verify it's you" (docs/architecture.md "Re-auth"): the picker's options and the grants by password and
/// by email link. Phone grants come through `OTPService` with purpose `reauth`.
public struct ReauthService: Sendable {
    let environment: AccountsEnvironment
    var repository: any AccountRepository { environment.repository }
    var clock: any LedgerClock { environment.clock }

    public init(environment: AccountsEnvironment) {
        self.environment = environment
    }

    /// The picker for `action` (`change_phone`, …) on `platform` (`ios`, `android`, `web`; nil:
    /// any); a validation failure listing both when either is unknown.
    public func options(_ session: SessionRef, action rawAction: String, platform rawPlatform: String? = nil) async throws
        -> ReauthOptions
    {
        let action = ReauthAction(rawValue: rawAction)
        let platform = rawPlatform.map(ReauthPlatform.init)
        var problems: [AccountService.ValidationFailure.Problem] = []
        if action == nil {
            problems.append(.oneOf(field: "action", code: "invalid_action", values: ReauthAction.allCases.map(\.rawValue)))
        }
        if case .some(nil) = platform {
            problems.append(.oneOf(field: "platform", code: "invalid_platform", values: ReauthPlatform.allCases.map(\.rawValue)))
        }
        guard problems.isEmpty, let action else { throw AccountService.ValidationFailure(problems: problems) }
        return try await repository.load(session.accountID).reauthOptions(for: action, platform: platform ?? nil, now: clock.now())
    }

    /// A grant for the right password. Each attempt is counted before the password is hashed
    /// (per account and per client address, like sign-in), so concurrent guesses cannot pass
    /// the lockout; wrong ones are recorded on the account.
    public func withPassword(_ session: SessionRef, password: String, client: String?) async throws -> ReauthGrantToken {
        let throttle = environment.throttle
        let admission = try await environment.admit(
            [throttle.key(reauthOf: session.accountID), client.map { throttle.key(address: $0) }])
        let state = try await repository.load(session.accountID)
        guard try await environment.hasher.verify(password, against: state.passwordHash), let storedHash = state.passwordHash else {
            try await throttle.failed(admission, now: clock.now())
            _ = try await repository.execute(session.accountID) { _ in
                .recordReauthFailure(sessionID: session.sessionID, method: .password)
            }
            throw IdentityError(.invalidCredentials, "Incorrect password. Try again.")
        }
        try await throttle.succeeded(admission)
        _ = try await environment.rehashIfDue(session.accountID, checked: storedHash, password: password)
        return try await grant(session, method: .password)
    }

    /// A one-use nonce for re-auth by Apple or Google, bound to `session` for
    /// `reauthNonceLifetime` (5 minutes): the app passes it (or its SHA-256) to the provider's sign-in.
    public func issueNonce(_ session: SessionRef) async throws -> (nonce: String, expiresAt: Date) {
        let nonce = Base64URL.encode(try SecureRandom.bytes(32))
        let issued = AccountCommand.NewNonce(
            nonceID: UUID.random(), nonceHash: Hex.encode(SHA256.hash(Array(nonce.utf8))),
            lifetime: environment.policies.reauthNonceLifetime)
        let (state, _) = try await repository.execute(session.accountID) { _ in .issueReauthNonce(sessionID: session.sessionID, issued) }
        guard let expiresAt = state.reauthNonces[issued.nonceID]?.expiresAt else { throw IdentityError.sessionExpired }
        return (nonce, expiresAt)
    }

    /// Emails a re-auth link to the account's address; its grant will belong to `session`.
    /// Returns the seconds until another may go (`resend_after`).
    @discardableResult
    public func sendEmailLink(_ session: SessionRef) async throws -> Int {
        let state = try await repository.load(session.accountID)
        guard let email = state.email else { throw IdentityError(.noEmail, "Add an email address first.") }
        let (link, message) = try environment.links.make(.reauth, to: email, now: clock.now())
        let (after, _) = try await repository.execute(session.accountID, outbox: [message]) { _ in
            .sendReauthLink(link, sessionID: session.sessionID)
        }
        return environment.links.resendAfter(.reauth, after, now: clock.now())
    }

    /// Confirms a re-auth link: a grant for the session that asked for it.
    public func confirmEmailLink(token: String) async throws -> ReauthGrantToken {
        guard let found = try await repository.link(forTokenHash: IssuedTokens.tokenHash(token), purpose: .reauth) else {
            throw IdentityError.linkExpired
        }
        let issued = try environment.issueReauthGrant(method: .emailLink)
        let (state, _) = try await repository.execute(found.accountID) { _ in .confirmReauthLink(linkID: found.linkID, issued.grant) }
        return ReauthGrantToken(token: issued.token, grantID: issued.grant.grantID, in: state)
    }

    /// The one guard of the sensitive endpoints: `reauth_required` unless `reauthToken` is a
    /// live grant of this session (or the action changes the only sign-in method).
    public func require(_ action: ReauthAction, session: SessionRef, reauthToken: String?) async throws {
        try await repository.load(session.accountID).requireReauth(
            action, sessionID: session.sessionID, tokenHash: reauthToken.map(ReauthGrantToken.hash), now: clock.now())
    }

    private func grant(_ session: SessionRef, method: ReauthMethod) async throws -> ReauthGrantToken {
        let issued = try environment.issueReauthGrant(method: method)
        let (state, _) = try await repository.execute(session.accountID) { _ in .grantReauth(sessionID: session.sessionID, issued.grant) }
        return ReauthGrantToken(token: issued.token, grantID: issued.grant.grantID, in: state)
    }
}
