import Foundation
import LedgerCore
import LedgerCrypto

/// The per-stream hash chain: `hash = SHA-256(prev_hash ‖ canonical(event))`.
///
/// The canonical form covers the payload's ciphertext digest, not the plaintext, so history
/// still verifies after a subject's key is destroyed. The SQL function
/// `ledger_event_canonical` writes the same bytes at append time.
public enum HashChain {
    /// The `prev_hash` of a stream's first event.
    public static let genesis = [UInt8](repeating: 0, count: 32)

    /// The stored fields the chain covers, read back as text where PostgreSQL formats them.
    public struct Link: Sendable {
        public var streamID: UUID
        public var version: Int64
        public var type: String
        public var schemaVersion: Int
        public var payloadSHA256: [UInt8]
        /// `metadata::text` as PostgreSQL prints the stored jsonb.
        public var metadataText: String
        public var recordedAtMicros: Int64

        public init(
            streamID: UUID, version: Int64, type: String, schemaVersion: Int, payloadSHA256: [UInt8],
            metadataText: String, recordedAtMicros: Int64
        ) {
            self.streamID = streamID
            self.version = version
            self.type = type
            self.schemaVersion = schemaVersion
            self.payloadSHA256 = payloadSHA256
            self.metadataText = metadataText
            self.recordedAtMicros = recordedAtMicros
        }
    }

    /// The fields, one a line, as `ledger_event_canonical` joins them; written as bytes, since an
    /// import chains millions of events here (`EventStore.queueNewStreams`).
    public static func canonical(_ link: Link) -> [UInt8] {
        var bytes: [UInt8] = []
        append(link, to: &bytes)
        return bytes
    }

    private static func append(_ link: Link, to bytes: inout [UInt8]) {
        bytes.reserveCapacity(bytes.count + 160 + link.type.utf8.count + link.metadataText.utf8.count)
        let newline = UInt8(ascii: "\n")
        bytes.append(contentsOf: "ledger-event-v1".utf8)
        bytes.append(newline)
        link.streamID.appendLowercased(to: &bytes)
        bytes.append(newline)
        bytes.append(contentsOf: String(link.version).utf8)
        bytes.append(newline)
        bytes.append(contentsOf: link.type.utf8)
        bytes.append(newline)
        bytes.append(contentsOf: String(link.schemaVersion).utf8)
        bytes.append(newline)
        bytes.append(contentsOf: Hex.encode(link.payloadSHA256).utf8)
        bytes.append(newline)
        bytes.append(contentsOf: link.metadataText.utf8)
        bytes.append(newline)
        bytes.append(contentsOf: String(link.recordedAtMicros).utf8)
    }

    public static func hash(previous: [UInt8], _ link: Link) -> [UInt8] {
        var input = previous
        append(link, to: &input)
        return SHA256.hash(input)
    }
}
