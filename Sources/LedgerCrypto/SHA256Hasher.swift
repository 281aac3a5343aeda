import COpenSSL

/// SHA-256 over data fed in pieces, for inputs too large to hold at once (a digest over every
/// event hash of the feed). `SHA256.hash` is the one-shot form.
public final class SHA256Hasher {
    private let context: OpaquePointer

    public init() {
        // Allocation and init fail only when memory is exhausted; nothing sensible remains then.
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("SHA-256: \(CryptoError.openSSL("EVP_DigestInit_ex"))")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            _ = EVP_DigestUpdate(context, buffer.baseAddress, buffer.count)
        }
    }

    /// The digest of everything fed so far; the hasher must not be used afterwards.
    public func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length: UInt32 = 0
        _ = EVP_DigestFinal_ex(context, &digest, &length)
        return digest
    }
}
