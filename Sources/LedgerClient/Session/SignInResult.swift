/// How a sign-in ended: a session, or a second factor to give first (API.md "Two-factor").
public enum SignInResult: Sendable, Hashable {
    /// Signed in; the session keeps these tokens.
    case signedIn(SessionTokens)
    /// Two-factor is on: finish with `LedgerSession.completeSignIn(_:code:)`.
    case mfaRequired(MFAChallenge)
}

/// A sign-in waiting for its second factor (`mfa_required`).
public struct MFAChallenge: Sendable, Hashable {
    /// The `mfa_token`: good for 5 minutes and 5 wrong codes.
    public let token: String
    /// What may answer it: `totp`, `recovery_code`.
    public let methods: [String]

    /// A challenge as the service answered it.
    public init(token: String, methods: [String]) {
        self.token = token
        self.methods = methods
    }
}
