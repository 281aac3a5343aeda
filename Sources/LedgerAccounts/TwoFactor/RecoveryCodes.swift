import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Recovery codes: shown once, stored as SHA-256, each good for one sign-in. Twelve characters
/// from an alphabet without look-alikes (60 bits), written `xxxx-xxxx-xxxx`; typed back in any
/// case, with or without the dashes.
public enum RecoveryCodes {
    static let alphabet = Array("abcdefghjkmnpqrstuvwxyz23456789")

    /// `count` new codes and their hashes, in the same order.
    public static func generate(count: Int) throws -> (codes: [String], hashes: [String]) {
        var codes: [String] = []
        while codes.count < count {
            let characters = Array(try SecureRandom.string(12, from: alphabet))
            let code = [characters[0..<4], characters[4..<8], characters[8..<12]].map { String($0) }.joined(separator: "-")
            if !codes.contains(code) { codes.append(code) }
        }
        return (codes, codes.map(hash))
    }

    /// The hash a typed code is looked up by.
    public static func hash(_ code: String) -> String {
        let normalized = code.lowercased().filter { $0 != "-" && !$0.isWhitespace }
        return Hex.encode(SHA256.hash(Array(normalized.utf8)))
    }
}
