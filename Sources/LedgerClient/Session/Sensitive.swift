/// The outcome of a sensitive call (docs/api.md "Re-auth"): done, or `403 reauth_required` with
/// the ways this account can prove it is the person.
public enum Sensitive<Value: Sendable>: Sendable {
    /// The call was made.
    case done(Value)
    /// Re-authenticate by one of the methods (`LedgerSession.reauthenticate(password:)`, …),
    /// then call again: the session sends the grant by itself.
    case reauthRequired(ReauthRequired)
}
