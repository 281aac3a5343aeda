/// How a sign-in ended: a session, or a second factor to give first (docs/api.md "Two-factor").
public enum SignInResult: Sendable, Hashable {
    /// Signed in; the session keeps these tokens.
    case signedIn(SessionTokens)
    /// Two-factor is on: finish with `LedgerSession.completeSignIn(_:code:)`.
    case mfaRequired(MFAChallenge)
}
