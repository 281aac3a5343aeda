import Foundation
import LedgerCore
import LedgerCrypto

extension Checkpoint {
    /// The JSON document with sorted keys: what `ledger checkpoint` writes and auditors keep.
    ///
    /// Digests and hashes are lower-case hex, the signature and the raw 32-byte public key are
    /// base64, numbers are JSON integers.
    public func document() throws -> String {
        let document = Document(
            format: Self.format, id: id.lowercased, createdAt: createdAt, cursor: cursor.token, events: events,
            feedDigest: Hex.encode(feedDigest),
            streams: streams.map { .init(streamID: $0.streamID.lowercased, version: $0.version, headHash: Hex.encode($0.hash)) },
            digest: Hex.encode(digest), publicKey: Data(publicKey.rawRepresentation).base64EncodedString(),
            signature: Data(signature).base64EncodedString())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
    }

    /// Reads a document written by `document()`. It checks the form only: whether the signature
    /// holds, and for which key, is `EventStore.verifyCheckpoint`'s business.
    public init(document text: String) throws {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(text.utf8))
        } catch {
            throw EventStoreError(.malformedCheckpoint, "the file is not a checkpoint document (it does not parse as one)")
        }
        guard document.format == Self.format else {
            throw EventStoreError(.malformedCheckpoint, "unknown checkpoint format \"\(document.format.prefix(40))\"")
        }
        func field<T>(_ value: T?, _ name: String) throws -> T {
            guard let value else { throw EventStoreError(.malformedCheckpoint, "the checkpoint's \(name) is malformed") }
            return value
        }
        func digestField(_ text: String, _ name: String) throws -> [UInt8] {
            try field(Hex.decode(text).flatMap { $0.count == SHA256.byteCount ? $0 : nil }, name)
        }
        id = try field(UUID(uuidString: document.id), "id")
        createdAt = document.createdAt
        cursor = try field(try? FeedCursor(token: document.cursor), "cursor")
        events = document.events
        feedDigest = try digestField(document.feedDigest, "feed_digest")
        streams = try document.streams.map { head in
            StreamHead(
                streamID: try field(UUID(uuidString: head.streamID), "stream_id"), version: head.version,
                hash: try digestField(head.headHash, "head_hash of stream \(head.streamID.prefix(36))"))
        }
        digest = try digestField(document.digest, "digest")
        publicKey = try field(
            Data(base64Encoded: document.publicKey).flatMap { try? Ed25519.PublicKey(rawRepresentation: Array($0)) },
            "public_key")
        signature = try field(Data(base64Encoded: document.signature).map(Array.init), "signature")
    }

    /// The JSON form, field for field.
    private struct Document: Codable {
        struct Head: Codable {
            var streamID: String
            var version: Int64
            var headHash: String

            enum CodingKeys: String, CodingKey {
                case streamID = "stream_id", version, headHash = "head_hash"
            }
        }

        var format: String
        var id: String
        var createdAt: String
        var cursor: String
        var events: Int64
        var feedDigest: String
        var streams: [Head]
        var digest: String
        var publicKey: String
        var signature: String

        enum CodingKeys: String, CodingKey {
            case format, id, createdAt = "created_at", cursor, events, feedDigest = "feed_digest", streams, digest
            case publicKey = "public_key", signature
        }
    }
}
