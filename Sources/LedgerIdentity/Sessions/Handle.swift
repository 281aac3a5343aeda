import Foundation
import LedgerCrypto

/// A public handle: 3–20 of `a–z A–Z 0–9 _`, unique ignoring case, shown as typed.
public struct Handle: Sendable, Hashable, CustomStringConvertible {
    public let value: String
    /// Lower-cased: the key of the uniqueness claim.
    public var normalized: String { value.lowercased() }

    public init?(_ raw: String) {
        guard (3...20).contains(raw.utf8.count),
            raw.utf8.allSatisfy({ Self.allowed($0) })
        else { return nil }
        self.value = raw
    }

    public var description: String { value }

    static func allowed(_ byte: UInt8) -> Bool {
        (0x61...0x7a).contains(byte) || (0x41...0x5a).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5f
    }

    /// How many temporary handles there are: 12 digits, so that drawing one at random for
    /// millions of accounts almost never meets a taken one (a sign-up draws again when it does).
    public static let temporarySpace: UInt64 = 1_000_000_000_000

    /// A temporary handle like `user_004839217755`, itself valid under the rules.
    public static func temporary(randomDigits: () -> UInt64) -> Handle {
        Handle(String(format: "user_%012llu", randomDigits() % temporarySpace))!
    }

    /// A temporary handle drawn at random.
    public static func randomTemporary() -> Handle {
        temporary { (try? SecureRandom.uniform64(below: temporarySpace)) ?? UInt64(Date().timeIntervalSince1970 * 1_000_000) }
    }
}
