import COpenSSL

/// Bytes from OpenSSL's CSPRNG.
public enum SecureRandom {
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&out, Int32(count)) == 1 else {
            throw CryptoError(.randomUnavailable, "RAND_bytes failed")
        }
        return out
    }

    /// A uniformly distributed number in `0..<upperBound`, without modulo bias.
    public static func uniform64(below upperBound: UInt64) throws -> UInt64 {
        precondition(upperBound > 0)
        let limit = UInt64.max - UInt64.max % upperBound
        while true {
            let raw = try bytes(8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            if raw < limit { return raw % upperBound }
        }
    }

    /// `count` characters drawn uniformly and independently from `alphabet` (codes and secrets
    /// people type or scan).
    public static func string(_ count: Int, from alphabet: [Character]) throws -> String {
        var characters: [Character] = []
        characters.reserveCapacity(count)
        for _ in 0..<count { characters.append(alphabet[Int(try uniform(below: UInt32(alphabet.count)))]) }
        return String(characters)
    }

    /// A uniformly distributed number in `0..<upperBound`, without modulo bias.
    public static func uniform(below upperBound: UInt32) throws -> UInt32 {
        precondition(upperBound > 0)
        let limit = UInt32.max - UInt32.max % upperBound
        while true {
            let raw = try bytes(4).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            if raw < limit { return raw % upperBound }
        }
    }
}
