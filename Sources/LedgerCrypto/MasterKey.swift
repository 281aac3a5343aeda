import Foundation
import LedgerCore

/// The key that wraps every subject's data key (envelope encryption).
///
/// It comes from configuration (`LEDGER_MASTER_KEY`, base64 of 32 bytes) and never reaches
/// the database: only its `keyID`, a one-way fingerprint, is stored beside wrapped keys so
/// that a wrong master key is reported as such instead of as a corrupt key.
public struct MasterKey: Sendable {
    let bytes: [UInt8]
    /// A public fingerprint of the key (16 hex digits), safe to log.
    public let keyID: String

    public init(bytes: [UInt8]) throws {
        guard bytes.count == AESGCM.keyByteCount else {
            throw CryptoError(.invalidKey, "the master key must be \(AESGCM.keyByteCount) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
        self.keyID = Hex.encode(SHA256.hash(Array("account-ledger/master-key-id/".utf8) + bytes).prefix(8))
    }

    /// Parses base64 (standard or URL-safe) of 32 bytes.
    public init(base64 text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let decoded = Data(base64Encoded: trimmed).map(Array.init) ?? Base64URL.decode(trimmed) else {
            throw CryptoError(.invalidKey, "the master key is not valid base64")
        }
        try self.init(bytes: decoded)
    }

    /// A fresh random master key.
    public static func generate() throws -> MasterKey {
        try MasterKey(bytes: SecureRandom.bytes(AESGCM.keyByteCount))
    }

    /// A 32-byte key for one purpose (`label`), derived one-way from the master key, so a
    /// purpose's key says nothing about the master key or the other purposes' keys.
    public func derivedKey(label: String) -> [UInt8] {
        HMACSHA256.authenticate(key: bytes, message: Array("account-ledger/derived/\(label)".utf8))
    }

    /// The key as base64, for writing a generated development key to disk.
    public var base64: String { Data(bytes).base64EncodedString() }

    private static let wrapFormat: UInt8 = 1
    private var keyIDBytes: [UInt8] { Hex.decode(keyID)! }

    /// Wraps a subject's data key; the subject id is bound as associated data so a wrapped
    /// key cannot be moved to another subject.
    public func wrap(_ dataKey: DataKey, subjectID: UUID) throws -> [UInt8] {
        let nonce = try SecureRandom.bytes(AESGCM.nonceByteCount)
        let sealed = try AESGCM.seal(key: bytes, nonce: nonce, plaintext: dataKey.bytes, additionalData: subjectID.bytes)
        return [Self.wrapFormat] + keyIDBytes + nonce + sealed
    }

    /// Unwraps a data key written by `wrap`.
    public func unwrap(_ wrapped: [UInt8], subjectID: UUID) throws -> DataKey {
        let headerCount = 1 + 8 + AESGCM.nonceByteCount
        guard wrapped.count == headerCount + AESGCM.keyByteCount + AESGCM.tagByteCount,
            wrapped[0] == Self.wrapFormat
        else {
            throw CryptoError(.malformedCiphertext, "wrapped data key has an unknown format")
        }
        let storedKeyID = Hex.encode(wrapped[1..<9])
        guard storedKeyID == keyID else {
            throw CryptoError(
                .wrongMasterKey,
                "data key was wrapped by master key \(storedKeyID), but the configured master key is \(keyID)")
        }
        let nonce = Array(wrapped[9..<headerCount])
        let raw = try AESGCM.open(key: bytes, nonce: nonce, sealed: wrapped[headerCount...], additionalData: subjectID.bytes)
        return try DataKey(bytes: raw)
    }
}
