/// The `response` of a `RegistrationResponseJSON` (WebAuthn L3 §5.1, `toJSON()`), base64url fields.
public struct AuthenticatorAttestationResponseJSON: Sendable, Codable, Hashable {
    public var clientDataJSON: String
    public var attestationObject: String
    public var transports: [String]?
    public var publicKeyAlgorithm: Int?
    public var publicKey: String?
    public var authenticatorData: String?

    public init(
        clientDataJSON: String, attestationObject: String, transports: [String]? = nil, publicKeyAlgorithm: Int? = nil,
        publicKey: String? = nil, authenticatorData: String? = nil
    ) {
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
        self.publicKeyAlgorithm = publicKeyAlgorithm
        self.publicKey = publicKey
        self.authenticatorData = authenticatorData
    }
}
