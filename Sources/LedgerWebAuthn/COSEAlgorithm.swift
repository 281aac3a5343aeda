/// The signature algorithms the service accepts for a credential (IANA COSE Algorithms),
/// the ones its creation options list in `pubKeyCredParams`.
public enum COSEAlgorithm: Int, Sendable, CustomStringConvertible {
    /// ECDSA with P-256 and SHA-256; WebAuthn signatures are ASN.1 DER.
    case es256 = -7
    /// Ed25519 (RFC 8032), 64-byte signatures.
    case edDSA = -8
    /// RSASSA-PKCS1-v1_5 with SHA-256, keys of 2048 bits or more.
    case rs256 = -257

    public var description: String {
        switch self {
        case .es256: return "ES256"
        case .edDSA: return "EdDSA"
        case .rs256: return "RS256"
        }
    }
}
