import COpenSSL

extension AESGCM {
    /// Opens many messages under one key with one OpenSSL context, so the key schedule is
    /// set up once rather than per message (a feed page opens thousands of payloads under a
    /// few keys). Not thread-safe: one opener per task.
    public final class Opener {
        private let context: OpaquePointer

        public init(key: [UInt8]) throws {
            guard key.count == keyByteCount else {
                throw CryptoError(.invalidKey, "AES-256-GCM needs a \(keyByteCount)-byte key, got \(key.count)")
            }
            guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("EVP_CIPHER_CTX_new") }
            self.context = context
            guard EVP_DecryptInit_ex(context, AESGCM.cipher ?? EVP_aes_256_gcm(), nil, key, nil) == 1 else {
                throw CryptoError.openSSL("EVP_DecryptInit_ex")
            }
        }

        deinit {
            EVP_CIPHER_CTX_free(context)
        }

        /// Decrypts and authenticates `sealed` (ciphertext followed by tag).
        public func open(nonce: ArraySlice<UInt8>, sealed: ArraySlice<UInt8>, additionalData: [UInt8]) throws -> [UInt8] {
            guard nonce.count == nonceByteCount else {
                throw CryptoError(.invalidKey, "AES-GCM needs a \(nonceByteCount)-byte nonce, got \(nonce.count)")
            }
            guard sealed.count >= tagByteCount else {
                throw CryptoError(.malformedCiphertext, "ciphertext shorter than its tag")
            }
            let cipherCount = sealed.count - tagByteCount
            // A new nonce on the initialised context keeps its key schedule.
            let started = nonce.withUnsafeBufferPointer { EVP_DecryptInit_ex(context, nil, nil, nil, $0.baseAddress) }
            guard started == 1 else { throw CryptoError.openSSL("EVP_DecryptInit_ex") }
            var length: Int32 = 0
            if !additionalData.isEmpty {
                guard EVP_DecryptUpdate(context, nil, &length, additionalData, Int32(additionalData.count)) == 1 else {
                    throw CryptoError.openSSL("EVP_DecryptUpdate(aad)")
                }
            }
            var failure: CryptoError?
            let plaintext = sealed.withUnsafeBufferPointer { input -> [UInt8] in
                let base = input.baseAddress!
                return [UInt8](unsafeUninitializedCapacity: max(cipherCount, 1)) { output, count in
                    var written: Int32 = 0
                    if cipherCount > 0, EVP_DecryptUpdate(context, output.baseAddress, &written, base, Int32(cipherCount)) != 1 {
                        failure = CryptoError.openSSL("EVP_DecryptUpdate")
                        return
                    }
                    // OpenSSL copies the expected tag; it does not write through this pointer.
                    let tag = UnsafeMutableRawPointer(mutating: base + cipherCount)
                    guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagByteCount), tag) == 1 else {
                        failure = CryptoError.openSSL("EVP_CTRL_GCM_SET_TAG")
                        return
                    }
                    var finalLength: Int32 = 0
                    guard EVP_DecryptFinal_ex(context, output.baseAddress! + Int(written), &finalLength) == 1 else {
                        ERR_clear_error()
                        failure = CryptoError(.authenticationFailed, "AES-GCM tag did not verify")
                        return
                    }
                    count = cipherCount
                }
            }
            if let failure { throw failure }
            return plaintext
        }
    }
}
