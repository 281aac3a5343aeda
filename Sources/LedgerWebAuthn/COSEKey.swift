import Crypto
import CryptoExtras

/// A credential public key in COSE_Key form (RFC 9052 §7, RFC 9053), as authenticator data
/// carries it and the service stores it: EC2 P-256 for ES256, OKP Ed25519 for EdDSA, RSA for RS256.
public struct COSEKey: Sendable {
    public let algorithm: COSEAlgorithm
    private let key: Key

    private enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    /// The smallest RSA modulus accepted (NIST SP 800-131A).
    public static let minimumRSABits = 2048
    /// The largest: a bigger modulus costs verification time and no authenticator makes one.
    public static let maximumRSABits = 8192

    /// Parses the key (the whole of `bytes`) and checks it can be used: the key type, curve and
    /// algorithm agree, coordinates have their lengths, an EC point lies on the curve, and an RSA
    /// modulus has 2048 to 8192 bits.
    public init(cbor bytes: [UInt8]) throws(WebAuthnError) {
        let map = try CBORDecoder(maximumDepth: 2, maximumItems: 64).decode(bytes)
        guard map.mapEntries != nil else { throw WebAuthnError(.malformed, "COSE key: not a map") }
        guard let keyType = map[1]?.integerValue else { throw WebAuthnError(.malformed, "COSE key: no key type (kty)") }
        guard let label = map[3]?.integerValue else { throw WebAuthnError(.malformed, "COSE key: no algorithm (alg)") }
        guard let algorithm = Int(exactly: label).flatMap(COSEAlgorithm.init(rawValue:)) else {
            throw WebAuthnError(.unsupportedAlgorithm, "COSE key: algorithm \(label) is not ES256, EdDSA or RS256")
        }
        switch (keyType, algorithm) {
        case (2, .es256):
            guard map[-1]?.integerValue == 1 else { throw WebAuthnError(.unsupportedAlgorithm, "COSE key: an EC2 curve other than P-256") }
            guard let x = map[-2]?.bytesValue, x.count == 32, let y = map[-3]?.bytesValue, y.count == 32 else {
                throw WebAuthnError(.malformed, "COSE key: EC2 coordinates are not two 32-byte strings")
            }
            // BoringSSL refuses a point that is not on the curve (or not reduced modulo p).
            guard let key = try? P256.Signing.PublicKey(rawRepresentation: x + y) else {
                throw WebAuthnError(.malformed, "COSE key: the point is not on P-256")
            }
            self.key = .p256(key)
        case (1, .edDSA):
            guard map[-1]?.integerValue == 6 else {
                throw WebAuthnError(.unsupportedAlgorithm, "COSE key: an OKP curve other than Ed25519")
            }
            guard let x = map[-2]?.bytesValue, x.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else {
                throw WebAuthnError(.malformed, "COSE key: the Ed25519 key is not 32 bytes")
            }
            self.key = .ed25519(key)
        case (3, .rs256):
            guard let modulus = map[-1]?.bytesValue, let exponent = map[-2]?.bytesValue, !exponent.isEmpty else {
                throw WebAuthnError(.malformed, "COSE key: RSA modulus or exponent missing")
            }
            let bits = Self.bitCount(modulus)
            guard bits >= Self.minimumRSABits, bits <= Self.maximumRSABits else {
                throw WebAuthnError(.unsupportedAlgorithm, "COSE key: an RSA modulus of \(bits) bits (2048 to 8192 accepted)")
            }
            // Exponents beyond 32 bits are refused by BoringSSL anyway; checking first keeps its error queue quiet.
            guard exponent.count <= 8, let key = try? _RSA.Signing.PublicKey(n: modulus, e: exponent) else {
                throw WebAuthnError(.malformed, "COSE key: the RSA key is invalid")
            }
            self.key = .rsa(key)
        case (1, _), (2, _), (3, _):
            throw WebAuthnError(.unsupportedAlgorithm, "COSE key: algorithm \(algorithm) does not go with key type \(keyType)")
        default:
            throw WebAuthnError(.unsupportedAlgorithm, "COSE key: key type \(keyType) is not EC2, OKP or RSA")
        }
        self.algorithm = algorithm
    }

    /// Whether `signature` is this key's signature over `data`: DER ECDSA over SHA-256(data)
    /// for ES256, raw Ed25519 for EdDSA, PKCS #1 v1.5 over SHA-256(data) for RS256.
    public func verify(signature: [UInt8], over data: [UInt8]) -> Bool {
        switch key {
        case .p256(let key):
            guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(signature, for: data)
        case .ed25519(let key):
            return signature.count == 64 && key.isValidSignature(signature, for: data)
        case .rsa(let key):
            let signature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return key.isValidSignature(signature, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
        }
    }

    /// The number of significant bits of a big-endian unsigned integer.
    static func bitCount(_ bytes: [UInt8]) -> Int {
        guard let first = bytes.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (bytes.count - first - 1) * 8 + (8 - bytes[first].leadingZeroBitCount)
    }
}
