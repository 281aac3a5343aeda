import Crypto
import CryptoExtras
import LedgerWebAuthn

/// A credential a `SoftAuthenticator` made: its id, user handle, key pair and where it is scoped.
public struct SoftCredential: Sendable {
    public let id: [UInt8]
    public let rpID: String
    /// The origin it was registered from, the default for its assertions.
    public let origin: String
    public let userHandle: [UInt8]
    public let algorithm: COSEAlgorithm
    /// The credential public key, COSE_Key bytes (what the relying party stores).
    public let publicKey: [UInt8]
    /// The flags of its registration, the default for its assertions.
    public let flags: SoftFlags
    let privateKey: PrivateKey

    enum PrivateKey: Sendable {
        case p256(P256.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    /// The credential's signature over `data`, as its algorithm makes them for WebAuthn.
    public func sign(_ data: [UInt8]) -> [UInt8] {
        // A failure to sign with a key we generated is a broken crypto library, not a test outcome.
        switch privateKey {
        case .p256(let key):
            return Array(try! key.signature(for: data).derRepresentation)
        case .ed25519(let key):
            return Array(try! key.signature(for: data))
        case .rsa(let key):
            return Array(try! key.signature(for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5).rawRepresentation)
        }
    }
}
