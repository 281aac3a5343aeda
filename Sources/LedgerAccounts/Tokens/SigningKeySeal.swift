import Foundation
import JWTKit
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Seals a signing key's private half under a key derived from the master key, bound to its
/// kid, its public point and its activation: a sealed key copied to another row does not open,
/// and a row written into the database by hand (another public key, an earlier activation) is
/// not trusted, since the service publishes and verifies with a key only once its seal opens.
struct SigningKeySeal: Sendable {
    private static let format: UInt8 = 1
    let key: [UInt8]
    let masterKeyID: String

    init(masterKey: MasterKey) {
        key = masterKey.derivedKey(label: KeyLabel.accessTokenSigningKey)
        masterKeyID = masterKey.keyID
    }

    /// What a seal is bound to: the record's kid, public point and activation.
    static func boundData(kid: String, x: String, y: String, activatesAt: Date) -> [UInt8] {
        Array("\(kid)\n\(x)\n\(y)\n\(Int64((activatesAt.timeIntervalSince1970 * 1_000_000).rounded()))".utf8)
    }

    func seal(_ privateKey: ES256PrivateKey, kid: String, x: String, y: String, activatesAt: Date) throws -> [UInt8] {
        let nonce = try SecureRandom.bytes(AESGCM.nonceByteCount)
        let sealed = try AESGCM.seal(
            key: key, nonce: nonce, plaintext: Array(privateKey.pemRepresentation.utf8),
            additionalData: Self.boundData(kid: kid, x: x, y: y, activatesAt: activatesAt))
        return [Self.format] + nonce + sealed
    }

    func open(_ record: SigningKeyRecord) throws -> ES256PrivateKey {
        guard let sealed = record.sealedKey else { throw CryptoError(.keyDestroyed, "signing key \(record.kid) is retired") }
        guard record.masterKeyID == masterKeyID else {
            throw CryptoError(
                .wrongMasterKey,
                "signing key \(record.kid) was sealed by master key \(record.masterKeyID), but the configured master key is \(masterKeyID)")
        }
        let header = 1 + AESGCM.nonceByteCount
        guard sealed.count > header, sealed[0] == Self.format else {
            throw CryptoError(.malformedCiphertext, "signing key \(record.kid) has an unknown format")
        }
        let pem = try AESGCM.open(
            key: key, nonce: Array(sealed[1..<header]), sealed: sealed[header...],
            additionalData: Self.boundData(kid: record.kid, x: record.x, y: record.y, activatesAt: record.activatesAt))
        let privateKey = try ES256PrivateKey(pem: String(decoding: pem, as: UTF8.self))
        guard let point = privateKey.publicKey.parameters, point.x == record.x, point.y == record.y else {
            throw CryptoError(.authenticationFailed, "signing key \(record.kid) does not match its public key")
        }
        return privateKey
    }
}
