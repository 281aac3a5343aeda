import Foundation
import LedgerCore
import LedgerCrypto

/// A signed statement of the whole ledger at one feed position: every stream's head (version
/// and hash) and a digest of the feed, in commit order, up to that position.
///
/// What is signed is `digest`, SHA-256 of `canonicalText`:
///
/// ```
/// ledger-checkpoint-v1
/// id <uuid>
/// created_at <RFC 3339>
/// cursor <feed cursor token>
/// events <count>
/// feed_digest <hex>
/// <stream id> <version> <head hash hex>      one line per stream, by stream id
/// ```
///
/// Every field of the document except the signature, the key and the digest itself is in that
/// text, so editing any of them breaks the signature. The signature is over the 32 digest bytes,
/// so anyone can check it with `openssl pkeyutl -verify -rawin` as well.
///
/// A head hash commits to its stream's whole history up to that version, so an event edited,
/// removed or reordered within the stream changes it — even when whoever edited it recomputed
/// every later hash in the database. The feed digest adds what heads cannot see: events added
/// to, removed from or moved within the commit order.
public struct Checkpoint: Sendable, Hashable {
    /// The document format, also the first line of the canonical text.
    public static let format = "ledger-checkpoint-v1"

    /// One stream's head as of the checkpoint's position.
    public struct StreamHead: Sendable, Hashable {
        public let streamID: UUID
        public let version: Int64
        public let hash: [UInt8]

        public init(streamID: UUID, version: Int64, hash: [UInt8]) {
            self.streamID = streamID
            self.version = version
            self.hash = hash
        }
    }

    public let id: UUID
    /// RFC 3339, exactly as signed.
    public let createdAt: String
    /// The last event covered, in commit order.
    public let cursor: FeedCursor
    /// Events at or before `cursor`.
    public let events: Int64
    /// SHA-256 over the `hash` of every event at or before `cursor`, in commit order.
    public let feedDigest: [UInt8]
    /// Sorted by stream id.
    public let streams: [StreamHead]
    /// The digest the document states (and the signature covers); `canonicalDigest` recomputes it.
    public let digest: [UInt8]
    /// The key the document says signed it. Verification trusts only a key given separately.
    public let publicKey: Ed25519.PublicKey
    public let signature: [UInt8]

    /// Signs the given contents.
    init(
        id: UUID, createdAt: Date, cursor: FeedCursor, events: Int64, feedDigest: [UInt8], streams: [StreamHead],
        signingKey: Ed25519.PrivateKey
    ) throws {
        self.id = id
        self.createdAt = Self.rfc3339(createdAt)
        self.cursor = cursor
        self.events = events
        self.feedDigest = feedDigest
        self.streams = streams.sorted { $0.streamID.lowercased < $1.streamID.lowercased }
        self.digest = SHA256.hash(
            Self.canonicalText(
                id: id, createdAt: self.createdAt, cursor: cursor, events: events, feedDigest: feedDigest, streams: self.streams))
        self.publicKey = signingKey.publicKey
        self.signature = try signingKey.signature(for: digest)
    }

    /// SHA-256 of the canonical text of this document's contents as they are now.
    public var canonicalDigest: [UInt8] {
        SHA256.hash(
            Self.canonicalText(
                id: id, createdAt: createdAt, cursor: cursor, events: events, feedDigest: feedDigest, streams: streams))
    }

    static func canonicalText(
        id: UUID, createdAt: String, cursor: FeedCursor, events: Int64, feedDigest: [UInt8], streams: [StreamHead]
    ) -> [UInt8] {
        var text: [UInt8] = []
        // A stream line is 36 + 1 + up to 19 + 1 + 64 + 1 bytes.
        text.reserveCapacity(256 + streams.count * 122)
        func line(_ value: String) {
            text.append(contentsOf: value.utf8)
            text.append(UInt8(ascii: "\n"))
        }
        line(format)
        line("id \(id.lowercased)")
        line("created_at \(createdAt)")
        line("cursor \(cursor.token)")
        line("events \(events)")
        line("feed_digest \(Hex.encode(feedDigest))")
        for head in streams {
            line("\(head.streamID.lowercased) \(head.version) \(Hex.encode(head.hash))")
        }
        return text
    }

    /// `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
    static func rfc3339(_ date: Date) -> String {
        let time = UTCTime(date)
        return time.dateAndTime(separator: "T") + "." + time.microsecondDigits + "Z"
    }
}
