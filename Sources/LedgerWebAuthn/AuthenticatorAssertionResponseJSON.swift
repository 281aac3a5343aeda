/// The `response` of an `AuthenticationResponseJSON` (WebAuthn L3 §5.1, `toJSON()`), base64url fields.
public struct AuthenticatorAssertionResponseJSON: Sendable, Codable, Hashable {
    public var clientDataJSON: String
    public var authenticatorData: String
    public var signature: String
    /// The user handle the credential was created with; always present for a discoverable credential.
    public var userHandle: String?
    /// Only with attestation requested for assertions, which the service never does; ignored.
    public var attestationObject: String?

    public init(
        clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String? = nil,
        attestationObject: String? = nil
    ) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
        self.attestationObject = attestationObject
    }
}
