import COpenSSL

/// AES-256-GCM through OpenSSL's EVP interface.
public enum AESGCM {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// The cipher, fetched from the provider once: with OpenSSL 3, `EVP_aes_256_gcm()` makes
    /// every init look the algorithm up by name again.
    nonisolated(unsafe) static let cipher: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)

    /// Encrypts `plaintext`; returns the ciphertext followed by the 16-byte tag.
    public static func seal(
        key: [UInt8], nonce: [UInt8], plaintext: [UInt8], additionalData: [UInt8]
    ) throws -> [UInt8] {
        try checkSizes(key: key, nonce: nonce)
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_EncryptInit_ex(context, cipher ?? EVP_aes_256_gcm(), nil, key, nonce) == 1 else {
            throw CryptoError.openSSL("EVP_EncryptInit_ex")
        }
        var length: Int32 = 0
        if !additionalData.isEmpty {
            guard EVP_EncryptUpdate(context, nil, &length, additionalData, Int32(additionalData.count)) == 1 else {
                throw CryptoError.openSSL("EVP_EncryptUpdate(aad)")
            }
        }
        var out = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var written: Int32 = 0
        if !plaintext.isEmpty {
            guard EVP_EncryptUpdate(context, &out, &written, plaintext, Int32(plaintext.count)) == 1 else {
                throw CryptoError.openSSL("EVP_EncryptUpdate")
            }
        }
        var finalLength: Int32 = 0
        let finalOK = out.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(context, buffer.baseAddress! + Int(written), &finalLength)
        }
        guard finalOK == 1 else { throw CryptoError.openSSL("EVP_EncryptFinal_ex") }
        let tagOK = out.withUnsafeMutableBufferPointer { buffer in
            EVP_CIPHER_CTX_ctrl(
                context, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount),
                buffer.baseAddress! + plaintext.count)
        }
        guard tagOK == 1 else { throw CryptoError.openSSL("EVP_CTRL_GCM_GET_TAG") }
        return out
    }

    /// Decrypts and authenticates `sealed` (ciphertext followed by tag).
    public static func open(
        key: [UInt8], nonce: [UInt8], sealed: some Collection<UInt8>, additionalData: [UInt8]
    ) throws -> [UInt8] {
        try Opener(key: key).open(nonce: nonce[...], sealed: ArraySlice(sealed), additionalData: additionalData)
    }

    static func checkSizes(key: [UInt8], nonce: [UInt8]) throws {
        guard key.count == keyByteCount else {
            throw CryptoError(.invalidKey, "AES-256-GCM needs a \(keyByteCount)-byte key, got \(key.count)")
        }
        guard nonce.count == nonceByteCount else {
            throw CryptoError(.invalidKey, "AES-GCM needs a \(nonceByteCount)-byte nonce, got \(nonce.count)")
        }
    }
}
