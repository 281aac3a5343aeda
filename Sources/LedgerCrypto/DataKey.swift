import Foundation

/// A subject's payload key (AES-256-GCM). Destroying its wrapped copy crypto-shreds every
/// payload sealed with it.
public struct DataKey: Sendable {
    let bytes: [UInt8]

    public init(bytes: [UInt8]) throws {
        guard bytes.count == AESGCM.keyByteCount else {
            throw CryptoError(.invalidKey, "a data key must be \(AESGCM.keyByteCount) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    public static func generate() throws -> DataKey {
        try DataKey(bytes: SecureRandom.bytes(AESGCM.keyByteCount))
    }

    private static let addressLabel = Array("account-ledger/client-address/".utf8)

    /// A 128-bit keyed hash of a client address under this subject's key: the same client gives
    /// the same hash within one account's history, two accounts' hashes of one address differ,
    /// and once the key is destroyed (purge) nothing links a hash to an address.
    public func addressHash(_ address: [UInt8]) -> [UInt8] {
        Array(HMACSHA256.authenticate(key: HMACSHA256.authenticate(key: bytes, message: Self.addressLabel), message: address).prefix(16))
    }

    static let payloadFormat: UInt8 = 1
    private static let nonceLabel = Array("account-ledger/payload-nonce/".utf8)

    /// Seals an event payload, bound to its event id.
    ///
    /// The nonce is derived from the key, the event id and the plaintext (a synthetic IV), so
    /// a retried append of the same event yields the same ciphertext (idempotency compares
    /// digests), while a nonce is only ever repeated for the identical message.
    public func seal(_ plaintext: [UInt8], eventID: UUID) throws -> [UInt8] {
        try seal(plaintext, associatedData: eventID.bytes)
    }

    /// Opens a payload sealed by `seal` for the same event id.
    public func open(_ ciphertext: [UInt8], eventID: UUID) throws -> [UInt8] {
        try open(ciphertext, associatedData: eventID.bytes)
    }

    /// Seals anything else kept under the subject's key (a stream snapshot), bound to
    /// `associatedData` (what it is and where it belongs), with the same synthetic nonce.
    public func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        let nonce = Array(
            HMACSHA256.authenticate(key: bytes, message: Self.nonceLabel + associatedData + plaintext)
                .prefix(AESGCM.nonceByteCount))
        let sealed = try AESGCM.seal(key: bytes, nonce: nonce, plaintext: plaintext, additionalData: associatedData)
        return [Self.payloadFormat] + nonce + sealed
    }

    /// Opens what `seal(_:associatedData:)` sealed with the same associated data.
    public func open(_ ciphertext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try makeOpener().open(ciphertext, associatedData: associatedData)
    }

    /// An opener for many payloads under this key (one OpenSSL context for all of them).
    public func makeOpener() throws -> Opener {
        try Opener(cipher: AESGCM.Opener(key: bytes))
    }

    /// Opens payloads sealed under one data key; not thread-safe.
    public struct Opener {
        let cipher: AESGCM.Opener

        /// Opens a payload sealed by `seal` for the same event id.
        public func open(_ ciphertext: [UInt8], eventID: UUID) throws -> [UInt8] {
            try open(ciphertext, associatedData: eventID.bytes)
        }

        /// Opens what `seal(_:associatedData:)` sealed with the same associated data.
        public func open(_ ciphertext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
            let headerCount = 1 + AESGCM.nonceByteCount
            guard ciphertext.count >= headerCount + AESGCM.tagByteCount, ciphertext[0] == DataKey.payloadFormat else {
                throw CryptoError(.malformedCiphertext, "payload has an unknown format")
            }
            return try cipher.open(
                nonce: ciphertext[1..<headerCount], sealed: ciphertext[headerCount...], additionalData: associatedData)
        }
    }
}
