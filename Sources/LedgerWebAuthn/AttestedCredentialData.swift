/// The credential a registration creates, as authenticator data carries it (§6.5.1).
public struct AttestedCredentialData: Sendable, Hashable {
    /// The authenticator model's AAGUID (16 bytes; zeros under attestation "none").
    public let aaguid: [UInt8]
    /// 1 to 1023 bytes.
    public let credentialID: [UInt8]
    /// The credential public key, the COSE_Key bytes as the authenticator encoded them.
    public let publicKey: [UInt8]

    /// The longest credential id WebAuthn Level 3 allows.
    public static let maximumCredentialIDLength = 1023

    public init(aaguid: [UInt8], credentialID: [UInt8], publicKey: [UInt8]) {
        self.aaguid = aaguid
        self.credentialID = credentialID
        self.publicKey = publicKey
    }
}
