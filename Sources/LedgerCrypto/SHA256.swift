import COpenSSL

/// SHA-256 through OpenSSL.
public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: byteCount)
        bytes.withUnsafeBytes { input in
            _ = COpenSSL.SHA256(input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count, &digest)
        }
        return digest
    }

    public static func hash(_ text: String) -> [UInt8] {
        hash(Array(text.utf8))
    }
}
