import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres

/// A stream that does not exist yet, with its first events: one of many written at once.
public struct NewStream: Sendable {
    public let streamID: UUID
    public let streamType: String
    /// Whose data key seals the payloads; a new subject's key is made with the stream.
    public let subjectID: UUID
    public let events: [NewEvent]

    public init(streamID: UUID, streamType: String, subjectID: UUID, events: [NewEvent]) {
        self.streamID = streamID
        self.streamType = streamType
        self.subjectID = subjectID
        self.events = events
    }
}

extension EventStore {
    /// Many new streams in the caller's transaction, each sealed under a new subject's data key
    /// (an import's batch): the keys in one statement and the events in another, both queued.
    /// Every stream is new, so its hash chain starts at the zero hash and is worked out here, with
    /// the `HashChain` the chain walk verifies with (`ledger_insert_new_streams`, schema/034,
    /// checks every digest, link and hash). A stream that exists already, or a subject that has
    /// a key, fails the statement, and with it the caller's transaction.
    ///
    /// The streams' ids must be new ones the caller made in this transaction: no stream lock is
    /// taken, which is safe only while no other transaction can know an id before this one
    /// commits (docs/architecture.md "Stream order in the feed").
    public func queueNewStreams(_ streams: [NewStream], recordedAt: Date, on connection: PostgresConnection) throws {
        guard !streams.isEmpty else { return }
        let recordedMicros = PostgresTimestamp.micros(recordedAt)
        var keys = BinaryRecordset()
        var catalog = BinaryRecordset()
        var events = NewStreamEvents()
        for stream in streams {
            try PreparedAppend.validate(stream.events)
            let key = try DataKey.generate()
            let wrapped = try keyring.masterKey.wrap(key, subjectID: stream.subjectID)
            keys.row {
                $0.field("subject", stream.subjectID)
                $0.field("wrapped", bytes: wrapped)
            }
            catalog.row {
                $0.field("stream", stream.streamID)
                $0.field("type", stream.streamType)
                $0.field("subject", stream.subjectID)
            }
            try events.append(stream, sealedWith: key, recordedMicros: recordedMicros)
        }
        connection.queue(
            "INSERT INTO subject_keys (subject_id, wrapped_key, master_key_id) SELECT r.subject, r.wrapped, $3 FROM \(keys.source)",
            keys.parameters + [.text(keyring.masterKey.keyID)])
        // The streams' three arrays, the time and the metadata texts, then the events' eleven.
        let eventArrays = (6...16).map { "$\($0)::\(events.rows.columnTypes[$0 - 6].sqlArrayType)" }
        connection.queue(
            "SELECT ledger_insert_new_streams($1::uuid[], $2::text[], $3::uuid[], $4, $5::text[], \(eventArrays.joined(separator: ", ")))",
            catalog.parameters + [.int(recordedMicros), .textArray(events.metadataTexts)] + events.rows.parameters,
            translate: { Self.translate($0) })
    }
}

/// The events of new streams as `ledger_insert_new_streams` takes them, chained as they are laid out.
struct NewStreamEvents {
    /// stream, subject, version, event id, type, schema version, payload, digest, previous hash,
    /// hash, metadata (a place among `metadataTexts`, from 1).
    var rows = BinaryRecordset()
    /// Each distinct metadata text once: a request's events share theirs.
    var metadataTexts: [String] = []
    private var metadataPlaces: [EventMetadata: (text: String, place: Int64)] = [:]

    /// `stream`'s events sealed under `key`, each linked to the one before from the zero hash.
    mutating func append(_ stream: NewStream, sealedWith key: DataKey, recordedMicros: Int64) throws {
        var previous = HashChain.genesis
        for (offset, event) in stream.events.enumerated() {
            let sealed = try key.seal(event.payload, eventID: event.eventID)
            let digest = SHA256.hash(sealed)
            let metadata = event.metadata.sealed(with: key)
            let printed: (text: String, place: Int64)
            if let known = metadataPlaces[metadata] {
                printed = known
            } else {
                metadataTexts.append(metadata.storedText)
                printed = (metadataTexts[metadataTexts.count - 1], Int64(metadataTexts.count))
                metadataPlaces[metadata] = printed
            }
            let version = Int64(offset + 1)
            let hash = HashChain.hash(
                previous: previous,
                HashChain.Link(
                    streamID: stream.streamID, version: version, type: event.type, schemaVersion: event.schemaVersion,
                    payloadSHA256: digest, metadataText: printed.text, recordedAtMicros: recordedMicros))
            rows.row {
                $0.field("stream", stream.streamID)
                $0.field("subject", stream.subjectID)
                $0.field("version", version)
                $0.field("event_id", event.eventID)
                $0.field("type", event.type)
                $0.field("schema_version", Int64(event.schemaVersion))
                $0.field("payload", bytes: sealed)
                $0.field("digest", bytes: digest)
                $0.field("prev", bytes: previous)
                $0.field("hash", bytes: hash)
                $0.field("meta", printed.place)
            }
            previous = hash
        }
    }
}
