import LedgerWebAuthn

/// The attestation statement a `SoftAuthenticator` returns at registration.
public enum SoftAttestation: Sendable, Hashable {
    /// fmt "none", an empty statement (what the service asks for).
    case none
    /// fmt "packed", self attestation: `{alg, sig}` signed with the credential key.
    case packedSelf
    /// Packed self attestation whose `alg` claims another algorithm (tests).
    case packedSelfClaiming(algorithm: Int)
    /// Packed self attestation with a byte of the signature flipped (tests).
    case packedSelfBadSignature
    /// Packed attestation carrying a certificate chain (`x5c`) of made-up bytes (tests).
    case packedWithCertificate
    /// Any format and statement, as given (tests).
    case custom(format: String, statement: CBORValue)
}
