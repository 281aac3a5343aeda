import COpenSSL

/// HMAC-SHA256 through OpenSSL.
public enum HMACSHA256 {
    public static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                _ = HMAC(
                    EVP_sha256(),
                    keyBytes.baseAddress, Int32(keyBytes.count),
                    messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBytes.count,
                    &out, &length
                )
            }
        }
        return Array(out.prefix(Int(length)))
    }
}
