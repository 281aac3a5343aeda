import Foundation
import LedgerCore

/// The short user id people read out to support (`usr_7G8H9K2LQM`): the first 50 bits of the
/// account's UUID in Crockford's base32, so it needs no storage and finds its account by a range
/// of the accounts' primary key. 48 of those bits are random (the last two are the UUID's
/// version), so two accounts share one only past millions of accounts; a lookup lists every match.
public struct PublicUserID: Sendable, Hashable, CustomStringConvertible {
    /// The 50 leading bits of the account id.
    public let bits: UInt64

    static let prefix = "usr_"
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    static let length = 10

    public init(accountID: UUID) {
        let bytes = accountID.bytes
        let leading = bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        bits = leading >> 14
    }

    /// Reads `usr_…` as people type it: any case, `O` for zero, `I` and `L` for one.
    public init?(_ text: String) {
        guard text.lowercased().hasPrefix(Self.prefix) else { return nil }
        let code = text.dropFirst(Self.prefix.count).uppercased()
        guard code.utf8.count == Self.length else { return nil }
        var bits: UInt64 = 0
        for byte in code.utf8 {
            guard let digit = Self.alphabet.firstIndex(of: Self.readAlike(byte)) else { return nil }
            bits = bits << 5 | UInt64(digit)
        }
        self.bits = bits
    }

    /// Letters people confuse with digits, read as the digit.
    private static func readAlike(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "O"): return UInt8(ascii: "0")
        case UInt8(ascii: "I"), UInt8(ascii: "L"): return UInt8(ascii: "1")
        default: return byte
        }
    }

    public var description: String {
        Self.prefix
            + String(decoding: (0..<Self.length).reversed().map { Self.alphabet[Int(bits >> (5 * UInt64($0)) & 31)] }, as: UTF8.self)
    }

    /// The smallest and largest account ids with this public id, for a range lookup (PostgreSQL
    /// orders `uuid` by its bytes).
    public var accountIDs: (lowest: UUID, highest: UUID) {
        let low = bits << 14
        return (Self.uuid(low, rest: 0), Self.uuid(low | 0x3FFF, rest: 0xFF))
    }

    /// A UUID whose first 8 bytes are `leading` (big-endian) and the rest `rest`.
    private static func uuid(_ leading: UInt64, rest: UInt8) -> UUID {
        var raw = uuid_t(rest, rest, rest, rest, rest, rest, rest, rest, rest, rest, rest, rest, rest, rest, rest, rest)
        withUnsafeMutableBytes(of: &raw) { bytes in
            for index in 0..<8 { bytes[index] = UInt8(truncatingIfNeeded: leading >> (8 * UInt64(7 - index))) }
        }
        return UUID(uuid: raw)
    }
}
