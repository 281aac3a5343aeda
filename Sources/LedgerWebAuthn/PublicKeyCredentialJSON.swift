/// What `PublicKeyCredential.toJSON()` gives (WebAuthn L3 §5.1), base64url-encoded: the
/// credential's ids and the ceremony's response, an attestation after `create()`
/// (`RegistrationResponseJSON`) or an assertion after `get()` (`AuthenticationResponseJSON`).
public struct PublicKeyCredentialJSON<Response: AuthenticatorResponseJSON>: Sendable, Codable, Hashable {
    /// The credential id, base64url.
    public var id: String
    /// The same id, base64url.
    public var rawId: String
    /// "public-key".
    public var type: String
    public var response: Response
    /// "platform" or "cross-platform".
    public var authenticatorAttachment: String?
    public var clientExtensionResults: ClientExtensionResults?

    public init(
        id: String, rawId: String, type: String = "public-key", response: Response, authenticatorAttachment: String? = nil,
        clientExtensionResults: ClientExtensionResults? = ClientExtensionResults()
    ) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
        self.authenticatorAttachment = authenticatorAttachment
        self.clientExtensionResults = clientExtensionResults
    }
}

/// A credential's response to `navigator.credentials.create()`.
public typealias RegistrationResponseJSON = PublicKeyCredentialJSON<AuthenticatorAttestationResponseJSON>

/// A credential's response to `navigator.credentials.get()`.
public typealias AuthenticationResponseJSON = PublicKeyCredentialJSON<AuthenticatorAssertionResponseJSON>

/// What both ceremonies' responses carry: the client data the authenticator signed over.
public protocol AuthenticatorResponseJSON: Sendable, Codable, Hashable {
    /// The client data JSON, base64url.
    var clientDataJSON: String { get }
}

extension AuthenticatorAttestationResponseJSON: AuthenticatorResponseJSON {}
extension AuthenticatorAssertionResponseJSON: AuthenticatorResponseJSON {}
