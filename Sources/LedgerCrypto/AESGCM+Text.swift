import LedgerCore

extension AESGCM {
    /// Seals `plaintext` under `key` with a fresh random nonce, as base64url text (nonce,
    /// ciphertext, tag): for secrets that travel as strings (link tokens, outbox rows).
    public static func sealText(key: [UInt8], plaintext: [UInt8], additionalData: [UInt8]) throws -> String {
        let nonce = try SecureRandom.bytes(nonceByteCount)
        return Base64URL.encode(nonce + (try seal(key: key, nonce: nonce, plaintext: plaintext, additionalData: additionalData)))
    }

    /// What `sealText` sealed; nil for text that is not such a box, was altered, or was sealed
    /// under another key or associated data.
    public static func openText(_ text: some StringProtocol, key: [UInt8], additionalData: [UInt8]) -> [UInt8]? {
        guard let bytes = Base64URL.decode(String(text)), bytes.count > nonceByteCount + tagByteCount else { return nil }
        return try? open(
            key: key, nonce: Array(bytes.prefix(nonceByteCount)), sealed: bytes.dropFirst(nonceByteCount), additionalData: additionalData)
    }
}
