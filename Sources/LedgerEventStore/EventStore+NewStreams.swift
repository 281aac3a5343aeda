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
    /// checks what it cannot trust blindly). A stream that exists already, or a subject that has
    /// a key, fails the statement, and with it the caller's transaction.
    public func queueNewStreams(_ streams: [NewStream], recordedAt: Date, on connection: PostgresConnection) throws {
        guard !streams.isEmpty else { return }
        let recordedMicros = PostgresTimestamp.micros(recordedAt)
        var subjects: [String] = []
        var wrappedKeys: [String] = []
        var rows = NewStreamRows()
        for stream in streams {
            try PreparedAppend.validate(stream.events)
            let key = try DataKey.generate()
            subjects.append(stream.subjectID.lowercased)
            wrappedKeys.append(Hex.encode(try keyring.masterKey.wrap(key, subjectID: stream.subjectID)))
            try rows.append(stream, sealedWith: key, recordedMicros: recordedMicros)
        }
        connection.queue(
            """
            INSERT INTO subject_keys (subject_id, wrapped_key, master_key_id)
            SELECT s, decode(k, 'hex'), $3 FROM unnest($1::uuid[], $2::text[]) AS t(s, k)
            """,
            [.text(PostgresArray.literal(subjects)), .text(PostgresArray.literal(wrappedKeys)), .text(keyring.masterKey.keyID)])
        connection.queue(
            """
            SELECT ledger_insert_new_streams($1::uuid[], $2::text[], $3::uuid[], $4, $5::uuid[], $6::uuid[], $7::int[], $8::uuid[],
                                             $9::text[], $10::int[], $11, $12::int[], $13, $14, $15, $16::text[], $17::int[])
            """,
            [
                .text(PostgresArray.literal(streams.map(\.streamID.lowercased))),
                .text(PostgresArray.literal(streams.map(\.streamType), quoted: true)), .text(PostgresArray.literal(subjects)),
                .int(recordedMicros), .text(PostgresArray.literal(rows.streams)), .text(PostgresArray.literal(rows.subjects)),
                .text(PostgresArray.literal(rows.versions)), .text(PostgresArray.literal(rows.eventIDs)),
                .text(PostgresArray.literal(rows.types, quoted: true)), .text(PostgresArray.literal(rows.schemaVersions)),
                .bytea(rows.payloads), .text(PostgresArray.literal(rows.lengths)), .bytea(rows.digests), .bytea(rows.previousHashes),
                .bytea(rows.hashes), .text(PostgresArray.literal(rows.metadataTexts, quoted: true)),
                .text(PostgresArray.literal(rows.metadataOf)),
            ], translate: { Self.translate($0) })
    }
}

/// The per-event arguments of `ledger_insert_new_streams`, chained as they are laid out.
struct NewStreamRows {
    var streams: [String] = []
    var subjects: [String] = []
    var versions: [String] = []
    var eventIDs: [String] = []
    var types: [String] = []
    var schemaVersions: [String] = []
    var payloads: [UInt8] = []
    var lengths: [String] = []
    var digests: [UInt8] = []
    var previousHashes: [UInt8] = []
    var hashes: [UInt8] = []
    /// Each distinct metadata text once, and each event's place (from 1) among them.
    var metadataTexts: [String] = []
    var metadataOf: [String] = []
    private var metadataIndex: [EventMetadata: (text: String, place: String)] = [:]

    /// `stream`'s events sealed under `key`, each linked to the one before from the zero hash.
    mutating func append(_ stream: NewStream, sealedWith key: DataKey, recordedMicros: Int64) throws {
        let streamText = stream.streamID.lowercased
        let subjectText = stream.subjectID.lowercased
        var previous = HashChain.genesis
        for (offset, event) in stream.events.enumerated() {
            let sealed = try key.seal(event.payload, eventID: event.eventID)
            let digest = SHA256.hash(sealed)
            // Events of one request share their metadata: its text is printed and sent once.
            let metadata = event.metadata.sealed(with: key)
            let printed: (text: String, place: String)
            if let known = metadataIndex[metadata] {
                printed = known
            } else {
                metadataTexts.append(metadata.storedText)
                printed = (metadataTexts[metadataTexts.count - 1], String(metadataTexts.count))
                metadataIndex[metadata] = printed
            }
            let version = offset + 1
            let hash = HashChain.hash(
                previous: previous,
                HashChain.Link(
                    streamID: stream.streamID, version: Int64(version), type: event.type, schemaVersion: event.schemaVersion,
                    payloadSHA256: digest, metadataText: printed.text, recordedAtMicros: recordedMicros))
            streams.append(streamText)
            subjects.append(subjectText)
            versions.append(String(version))
            eventIDs.append(event.eventID.lowercased)
            types.append(event.type)
            schemaVersions.append(String(event.schemaVersion))
            payloads.append(contentsOf: sealed)
            lengths.append(String(sealed.count))
            digests.append(contentsOf: digest)
            previousHashes.append(contentsOf: previous)
            hashes.append(contentsOf: hash)
            metadataOf.append(printed.place)
            previous = hash
        }
    }
}
