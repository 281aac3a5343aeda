import COpenSSL

/// Comparisons of secrets whose time does not depend on where they differ.
public enum ConstantTime {
    /// True when both byte strings are equal; the time taken depends only on their lengths.
    public static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.isEmpty { return true }
        return lhs.withUnsafeBytes { l in
            rhs.withUnsafeBytes { r in
                CRYPTO_memcmp(l.baseAddress, r.baseAddress, l.count) == 0
            }
        }
    }
}
