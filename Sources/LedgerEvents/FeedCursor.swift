import Foundation
import LedgerCore

/// A position in the commit-ordered global feed: the transaction id and the global position of
/// the last event read. Opaque to clients, who see only its string form.
public struct FeedCursor: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let transactionID: UInt64
    public let position: Int64

    /// Before every event.
    public static let start = FeedCursor(transactionID: 0, position: 0)

    public init(transactionID: UInt64, position: Int64) {
        self.transactionID = transactionID
        self.position = position
    }

    /// The opaque form: base64url of `v1.<tx>.<position>`.
    public var token: String {
        var output: [UInt8] = []
        appendToken(to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends `token` to `output` (the feed writes one per event).
    public func appendToken(to output: inout [UInt8]) {
        var plain: [UInt8] = []
        plain.reserveCapacity(44)
        plain.append(contentsOf: "v1.".utf8)
        plain.appendDecimal(transactionID)
        plain.append(UInt8(ascii: "."))
        plain.appendDecimal(position)
        Base64URL.append(plain, to: &output)
    }

    /// Parses a token written by `token`.
    public init(token: String) throws {
        guard let bytes = Base64URL.decode(token) else {
            throw EventStoreError(.invalidCursor, "the cursor is not one this service issued")
        }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ".")
        guard parts.count == 3, parts[0] == "v1", let transaction = UInt64(parts[1]), let position = Int64(parts[2]),
            position >= 0
        else {
            throw EventStoreError(.invalidCursor, "the cursor is not one this service issued")
        }
        self.init(transactionID: transaction, position: position)
    }

    public static func < (lhs: FeedCursor, rhs: FeedCursor) -> Bool {
        (lhs.transactionID, lhs.position) < (rhs.transactionID, rhs.position)
    }

    public var description: String { token }
}
