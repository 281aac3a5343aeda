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
