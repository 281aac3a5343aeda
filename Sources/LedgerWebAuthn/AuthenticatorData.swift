/// The authenticator data (WebAuthn §6.1) that every registration and assertion signs:
/// RP id hash, flags, signature counter, and for a registration the new credential.
public struct AuthenticatorData: Sendable {
    /// SHA-256 of the RP id the authenticator scoped the credential to (32 bytes).
    public let rpIDHash: [UInt8]
    public let flags: Flags
    public let signCount: UInt32
    /// Present when the AT flag is set (registration).
    public let attestedCredential: AttestedCredentialData?
    /// The extension outputs, a CBOR map, when the ED flag is set.
    public let extensions: CBORValue?
    /// The bytes as signed.
    public let raw: [UInt8]

    /// The fixed part: RP id hash, flags and counter.
    static let headerLength = 37

    /// Parses the bytes, which must hold exactly what the AT and ED flags announce. A credential
    /// backed up (BS) but not eligible for backup (BE) is malformed (§6.1.3).
    public init(bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= Self.headerLength else {
            throw WebAuthnError(.malformed, "authenticator data: \(bytes.count) bytes, at least 37 expected")
        }
        let flags = Flags(rawValue: bytes[32])
        guard flags.backupEligible || !flags.backedUp else {
            throw WebAuthnError(.malformed, "authenticator data: backed up (BS) without being backup eligible (BE)")
        }
        var index = Self.headerLength
        var attested: AttestedCredentialData?
        if flags.attestedCredentialData {
            // AAGUID (16), credential id length (2), credential id, then the COSE key.
            guard bytes.count >= index + 18 else {
                throw WebAuthnError(.malformed, "authenticator data: attested credential data cut short")
            }
            let aaguid = Array(bytes[index..<index + 16])
            let idLength = Int(bytes[index + 16]) << 8 | Int(bytes[index + 17])
            index += 18
            guard (1...AttestedCredentialData.maximumCredentialIDLength).contains(idLength) else {
                throw WebAuthnError(.malformed, "authenticator data: a credential id of \(idLength) bytes (1 to 1023 allowed)")
            }
            guard bytes.count >= index + idLength else {
                throw WebAuthnError(.malformed, "authenticator data: the credential id is cut short")
            }
            let credentialID = Array(bytes[index..<index + idLength])
            index += idLength
            let (_, consumed) = try CBORDecoder().decodePrefix(bytes[index...])
            attested = AttestedCredentialData(aaguid: aaguid, credentialID: credentialID, publicKey: Array(bytes[index..<index + consumed]))
            index += consumed
        }
        var extensions: CBORValue?
        if flags.extensionData {
            let (value, consumed) = try CBORDecoder().decodePrefix(bytes[index...])
            guard value.mapEntries != nil else { throw WebAuthnError(.malformed, "authenticator data: extensions are not a map") }
            extensions = value
            index += consumed
        }
        guard index == bytes.count else {
            throw WebAuthnError(.malformed, "authenticator data: \(bytes.count - index) bytes that no flag announces")
        }
        self.rpIDHash = Array(bytes[0..<32])
        self.flags = flags
        self.signCount = UInt32(bytes[33]) << 24 | UInt32(bytes[34]) << 16 | UInt32(bytes[35]) << 8 | UInt32(bytes[36])
        self.attestedCredential = attested
        self.extensions = extensions
        self.raw = bytes
    }
}
