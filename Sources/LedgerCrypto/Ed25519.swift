import COpenSSL
import LedgerCore

/// Ed25519 signatures (RFC 8032, "pure" Ed25519) through OpenSSL's EVP interface.
///
/// Keys read and write the PEM forms OpenSSL's tools use — PKCS#8 `PRIVATE KEY` and
/// SubjectPublicKeyInfo `PUBLIC KEY` — so operators may make or inspect them with
/// `openssl genpkey -algorithm ed25519` and `openssl pkey -pubout` as well.
public enum Ed25519 {
    public static let keyByteCount = 32
    public static let signatureByteCount = 64

    /// A signing key. It never prints itself: `description` is redacted.
    public struct PrivateKey: Sendable, CustomStringConvertible {
        /// The 32-byte seed of RFC 8032.
        let seed: [UInt8]
        public let publicKey: PublicKey

        /// A new key from OpenSSL's CSPRNG: an Ed25519 private key is 32 uniformly random bytes.
        public static func generate() throws -> PrivateKey {
            try PrivateKey(rawRepresentation: SecureRandom.bytes(keyByteCount))
        }

        /// The 32-byte seed (RFC 8032's private key).
        public init(rawRepresentation seed: [UInt8]) throws {
            guard seed.count == keyByteCount else {
                throw CryptoError(.invalidKey, "an Ed25519 private key is \(keyByteCount) bytes, got \(seed.count)")
            }
            let key = try EVPKey(privateSeed: seed)
            self.seed = seed
            self.publicKey = try PublicKey(rawRepresentation: key.rawPublicKey())
        }

        /// Reads an unencrypted PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`).
        public init(pemRepresentation pem: String) throws {
            let key = try EVPKey(pem: pem, isPrivate: true)
            try self.init(rawRepresentation: key.rawPrivateKey())
        }

        /// PKCS#8 PEM, unencrypted: whoever stores it protects the file (mode 0600).
        public var pemRepresentation: String {
            get throws { try EVPKey(privateSeed: seed).pem(isPrivate: true) }
        }

        /// Signs `message` (Ed25519 hashes the message itself; no digest is chosen).
        public func signature(for message: [UInt8]) throws -> [UInt8] {
            let key = try EVPKey(privateSeed: seed)
            guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL("EVP_MD_CTX_new") }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, nil, nil, key.pointer) == 1 else {
                throw CryptoError.openSSL("EVP_DigestSignInit")
            }
            var signature = [UInt8](repeating: 0, count: signatureByteCount)
            var length = signature.count
            guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1,
                length == signatureByteCount
            else { throw CryptoError.openSSL("EVP_DigestSign") }
            return signature
        }

        public var description: String { "Ed25519.PrivateKey(public: \(publicKey.fingerprint), <redacted>)" }
    }

    /// A verifying key.
    public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
        /// The 32-byte encoded point.
        public let rawRepresentation: [UInt8]

        public init(rawRepresentation: [UInt8]) throws {
            guard rawRepresentation.count == keyByteCount else {
                throw CryptoError(.invalidKey, "an Ed25519 public key is \(keyByteCount) bytes, got \(rawRepresentation.count)")
            }
            // Let OpenSSL accept it once, so a key that cannot be used fails here.
            _ = try EVPKey(publicKey: rawRepresentation)
            self.rawRepresentation = rawRepresentation
        }

        /// Reads a SubjectPublicKeyInfo PEM public key (`-----BEGIN PUBLIC KEY-----`).
        public init(pemRepresentation pem: String) throws {
            try self.init(rawRepresentation: EVPKey(pem: pem, isPrivate: false).rawPublicKey())
        }

        public var pemRepresentation: String {
            get throws { try EVPKey(publicKey: rawRepresentation).pem(isPrivate: false) }
        }

        /// True only for a valid signature of exactly `message` by this key's private key.
        public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
            guard signature.count == signatureByteCount, let key = try? EVPKey(publicKey: rawRepresentation),
                let context = EVP_MD_CTX_new()
            else { return false }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, nil, nil, key.pointer) == 1 else {
                ERR_clear_error()
                return false
            }
            let valid = EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
            // A failed verification leaves a reason on OpenSSL's error queue; it is not an error here.
            ERR_clear_error()
            return valid
        }

        /// SHA-256 of the raw key, first 8 bytes in hex: names the key in logs and messages.
        public var fingerprint: String { Hex.encode(SHA256.hash(rawRepresentation).prefix(8)) }

        public var description: String { "Ed25519.PublicKey(\(fingerprint))" }
    }
}

/// An owned `EVP_PKEY` of type Ed25519, freed with the wrapper. Made per operation from the raw
/// bytes, so the Swift key types stay plain, `Sendable` values.
private final class EVPKey {
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer?, _ operation: String) throws {
        guard let pointer else { throw CryptoError.openSSL(operation) }
        guard EVP_PKEY_get_id(pointer) == EVP_PKEY_ED25519 else {
            EVP_PKEY_free(pointer)
            throw CryptoError(.invalidKey, "the key is not an Ed25519 key")
        }
        self.pointer = pointer
    }

    convenience init(privateSeed seed: [UInt8]) throws {
        try self.init(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, seed.count), "EVP_PKEY_new_raw_private_key")
    }

    convenience init(publicKey bytes: [UInt8]) throws {
        try self.init(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, bytes, bytes.count), "EVP_PKEY_new_raw_public_key")
    }

    /// Parses PEM text. A passphrase-protected key is refused rather than prompted for: the
    /// callback answers "no passphrase" instead of OpenSSL's default terminal prompt.
    convenience init(pem: String, isPrivate: Bool) throws {
        let bytes = Array(pem.utf8)
        let parsed: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return isPrivate
                ? PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
                : PEM_read_bio_PUBKEY(bio, nil, { _, _, _, _ in -1 }, nil)
        }
        guard parsed != nil else {
            ERR_clear_error()
            throw CryptoError(
                .invalidKey,
                isPrivate
                    ? "not an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)"
                    : "not a PEM public key (-----BEGIN PUBLIC KEY-----)")
        }
        try self.init(parsed, "PEM_read_bio")
    }

    deinit { EVP_PKEY_free(pointer) }

    func rawPrivateKey() throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Ed25519.keyByteCount)
        var length = bytes.count
        guard EVP_PKEY_get_raw_private_key(pointer, &bytes, &length) == 1, length == Ed25519.keyByteCount else {
            throw CryptoError.openSSL("EVP_PKEY_get_raw_private_key")
        }
        return bytes
    }

    func rawPublicKey() throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Ed25519.keyByteCount)
        var length = bytes.count
        guard EVP_PKEY_get_raw_public_key(pointer, &bytes, &length) == 1, length == Ed25519.keyByteCount else {
            throw CryptoError.openSSL("EVP_PKEY_get_raw_public_key")
        }
        return bytes
    }

    /// PKCS#8 (`PEM_write_bio_PrivateKey` writes PKCS#8 in OpenSSL 3) or SubjectPublicKeyInfo.
    func pem(isPrivate: Bool) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.openSSL("BIO_new") }
        defer { BIO_free(bio) }
        let written =
            isPrivate
            ? PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil)
            : PEM_write_bio_PUBKEY(bio, pointer)
        guard written == 1 else { throw CryptoError.openSSL("PEM_write_bio") }
        var text = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        guard BIO_read(bio, &text, Int32(text.count)) == Int32(text.count) else { throw CryptoError.openSSL("BIO_read") }
        // The buffer held a private key's encoding: wipe it before it is released.
        defer { OPENSSL_cleanse(&text, text.count) }
        return String(decoding: text, as: UTF8.self)
    }
}
