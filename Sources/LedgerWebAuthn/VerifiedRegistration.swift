/// A registration that passed every check of §7.1: what the service stores for the new passkey.
public struct VerifiedRegistration: Sendable, Hashable {
    public let credentialID: [UInt8]
    /// The credential public key, COSE_Key bytes as the authenticator encoded them: store these.
    public let publicKey: [UInt8]
    public let algorithm: COSEAlgorithm
    /// The counter at registration (0 for most passkeys); the first assertion is compared with it.
    public let signCount: UInt32
    public let userVerified: Bool
    /// BE: a synced passkey; it stays so for the credential's life.
    public let backupEligible: Bool
    /// BS: backed up now.
    public let backedUp: Bool
    /// The authenticator model (zeros under attestation "none").
    public let aaguid: [UInt8]
    /// "none" or "packed".
    public let attestationFormat: String
    /// The transports the browser reported ("internal", "hybrid", "usb", …), for `excludeCredentials`.
    public let transports: [String]

    public init(
        credentialID: [UInt8], publicKey: [UInt8], algorithm: COSEAlgorithm, signCount: UInt32, userVerified: Bool,
        backupEligible: Bool, backedUp: Bool, aaguid: [UInt8], attestationFormat: String, transports: [String]
    ) {
        self.credentialID = credentialID
        self.publicKey = publicKey
        self.algorithm = algorithm
        self.signCount = signCount
        self.userVerified = userVerified
        self.backupEligible = backupEligible
        self.backedUp = backedUp
        self.aaguid = aaguid
        self.attestationFormat = attestationFormat
        self.transports = transports
    }
}
