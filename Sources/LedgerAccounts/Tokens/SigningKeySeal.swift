import Foundation
import JWTKit
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Seals a signing key's private half under a key derived from the master key, bound to its
/// kid: a sealed key copied to another row does not open, and the database alone signs nothing.
struct SigningKeySeal: Sendable {
    private static let format: UInt8 = 1
    let key: [UInt8]
    let masterKeyID: String

    init(masterKey: MasterKey) {
        key = masterKey.derivedKey(label: KeyLabel.accessTokenSigningKey)
        masterKeyID = masterKey.keyID
    }

    func seal(_ privateKey: ES256PrivateKey, kid: String) throws -> [UInt8] {
        let nonce = try SecureRandom.bytes(AESGCM.nonceByteCount)
        let sealed = try AESGCM.seal(
            key: key, nonce: nonce, plaintext: Array(privateKey.pemRepresentation.utf8), additionalData: Array(kid.utf8))
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
            key: key, nonce: Array(sealed[1..<header]), sealed: sealed[header...], additionalData: Array(record.kid.utf8))
        return try ES256PrivateKey(pem: String(decoding: pem, as: UTF8.self))
    }
}
