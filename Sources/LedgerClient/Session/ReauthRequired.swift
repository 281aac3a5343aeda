import Foundation

/// The outcome of a sensitive call (API.md "Re-auth"): done, or `403 reauth_required` with
/// the ways this account can prove it is the person.
public enum Sensitive<Value: Sendable>: Sendable {
    /// The call was made.
    case done(Value)
    /// Re-authenticate by one of the methods (`LedgerSession.reauthenticate(password:)`, …),
    /// then call again: the session sends the grant by itself.
    case reauthRequired(ReauthRequired)
}

/// What `403 reauth_required` asks for: `GET /me/reauth-options` for the action.
public struct ReauthRequired: Sendable, Hashable {
    /// The sensitive action, as `GET /me/reauth-options?action=` names it.
    public let action: String
    /// The methods offered: `password`, `phone`, `email_link`, `apple`, `google`, `totp`, `passkey`.
    public let methods: [String]
    /// True when no method is left (the session alone suffices, the seeds' soft warning).
    public let lastMethod: Bool

    /// The options as the service answered them.
    public init(action: String, methods: [String], lastMethod: Bool) {
        self.action = action
        self.methods = methods
        self.lastMethod = lastMethod
    }
}

/// A live re-auth grant of this session (`X-Reauth-Token` until `expiresAt`).
public struct ReauthGrant: Sendable, Hashable {
    /// The `reauth_token`.
    public let token: String
    /// When it ends (15 minutes after it was earned).
    public let expiresAt: Date

    /// A grant as the service answered it.
    public init(token: String, expiresAt: Date) {
        self.token = token
        self.expiresAt = expiresAt
    }
}
