import Foundation

/// A position in PostgreSQL's write-ahead log (a `pg_lsn`, written `16/B374D848`): how far the
/// primary has written, or a standby has replayed.
public struct WALPosition: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The byte offset in the log.
    public let offset: UInt64

    public init(offset: UInt64) {
        self.offset = offset
    }

    /// Parses `pg_lsn`'s text form: two hexadecimal halves around a slash; nil for anything else.
    public init?(_ text: String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, halves.allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy(\.isHexDigit) }),
            let high = UInt64(halves[0], radix: 16), let low = UInt64(halves[1], radix: 16)
        else { return nil }
        offset = high << 32 | low
    }

    /// Bytes from `earlier` to here (0 when `earlier` is not earlier).
    public func bytes(since earlier: WALPosition) -> Int64 {
        offset > earlier.offset ? Int64(clamping: offset - earlier.offset) : 0
    }

    public var description: String {
        String(offset >> 32, radix: 16, uppercase: true) + "/" + String(offset & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }

    public static func < (lhs: WALPosition, rhs: WALPosition) -> Bool { lhs.offset < rhs.offset }
}
