/// What `PublicKeyCredential.toJSON()` gives after `navigator.credentials.create()` (WebAuthn L3
/// §5.1): the new credential, its client data and attestation object, base64url-encoded.
public struct RegistrationResponseJSON: Sendable, Codable, Hashable {
    /// The credential id, base64url.
    public var id: String
    /// The same id, base64url.
    public var rawId: String
    /// "public-key".
    public var type: String
    public var response: AuthenticatorAttestationResponseJSON
    /// "platform" or "cross-platform".
    public var authenticatorAttachment: String?
    public var clientExtensionResults: ClientExtensionResults?

    public init(
        id: String, rawId: String, type: String = "public-key", response: AuthenticatorAttestationResponseJSON,
        authenticatorAttachment: String? = nil, clientExtensionResults: ClientExtensionResults? = ClientExtensionResults()
    ) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
        self.clientExtensionResults = clientExtensionResults
    }
}
