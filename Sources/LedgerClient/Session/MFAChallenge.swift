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
