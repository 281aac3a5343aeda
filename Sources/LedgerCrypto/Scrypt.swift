import COpenSSL
import Foundation
import LedgerCore

/// scrypt password hashes (OpenSSL `EVP_PBE_scrypt`) in a self-describing string,
/// `$scrypt$ln=17,r=8,p=1$<salt b64url>$<hash b64url>`, so the cost can be raised later and
/// old hashes still verify (and are rehashed at the next sign-in).
public struct Scrypt: Sendable, Hashable {
    /// log2 of N, the CPU/memory cost.
    public let logN: Int
    public let blockSize: Int
    public let parallelism: Int

    public static let saltByteCount = 16
    public static let hashByteCount = 32

    public init(logN: Int, blockSize: Int = 8, parallelism: Int = 1) {
        self.logN = logN
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    /// Memory one hash needs: 128·r·N bytes (plus slack for OpenSSL's check).
    public var memoryBytes: UInt64 { 128 * UInt64(blockSize) * (UInt64(1) << UInt64(logN)) }

    /// Hashes with a fresh random salt.
    public func hash(_ password: String) throws -> String {
        let salt = try SecureRandom.bytes(Self.saltByteCount)
        let derived = try derive(Array(password.utf8), salt: salt)
        return "$scrypt$ln=\(logN),r=\(blockSize),p=\(parallelism)$\(Base64URL.encode(salt))$\(Base64URL.encode(derived))"
    }

    /// Checks `password` against a string written by `hash` (any cost), in constant time.
    public static func verify(_ password: String, against encoded: String) throws -> Bool {
        guard let parsed = Parsed(encoded) else { throw CryptoError(.malformedCiphertext, "not a scrypt hash string") }
        let derived = try parsed.parameters.derive(Array(password.utf8), salt: parsed.salt, length: parsed.hash.count)
        return ConstantTime.equals(derived, parsed.hash)
    }

    /// The parameters a stored hash was made with; nil when it is not a scrypt string.
    public static func parameters(of encoded: String) -> Scrypt? {
        Parsed(encoded)?.parameters
    }

    /// The raw scrypt key derivation.
    public func derive(_ password: [UInt8], salt: [UInt8], length: Int = hashByteCount) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        // A trailing NUL keeps the pointer valid for an empty password; the length excludes it.
        let passwordBuffer = password.map { CChar(bitPattern: $0) } + [0]
        let ok = passwordBuffer.withUnsafeBufferPointer { passwordBytes in
            salt.withUnsafeBufferPointer { saltBytes in
                EVP_PBE_scrypt(
                    passwordBytes.baseAddress, password.count, saltBytes.baseAddress, saltBytes.count,
                    UInt64(1) << UInt64(logN), UInt64(blockSize), UInt64(parallelism),
                    memoryBytes + 1024 * 1024, &out, out.count)
            }
        }
        guard ok == 1 else { throw CryptoError.openSSL("EVP_PBE_scrypt") }
        return out
    }

    private struct Parsed {
        let parameters: Scrypt
        let salt: [UInt8]
        let hash: [UInt8]

        init?(_ encoded: String) {
            let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
            guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
            var values: [String: Int] = [:]
            for pair in parts[2].split(separator: ",") {
                let keyValue = pair.split(separator: "=")
                guard keyValue.count == 2, let value = Int(keyValue[1]) else { return nil }
                values[String(keyValue[0])] = value
            }
            guard let logN = values["ln"], let r = values["r"], let p = values["p"], (1...30).contains(logN),
                (1...64).contains(r), (1...16).contains(p),
                let salt = Base64URL.decode(String(parts[3])), let hash = Base64URL.decode(String(parts[4])), !hash.isEmpty
            else { return nil }
            self.parameters = Scrypt(logN: logN, blockSize: r, parallelism: p)
            self.salt = salt
            self.hash = hash
        }
    }
}
