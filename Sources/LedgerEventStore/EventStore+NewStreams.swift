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
    /// (an import's batch): the keys in one statement and the events in another
    /// (`ledger_append_new_streams`, schema/031), both queued. A stream that exists already, or a
    /// subject that has a key, fails the statement, and with it the caller's transaction.
    public func queueNewStreams(_ streams: [NewStream], recordedAt: Date, on connection: PostgresConnection) throws {
        guard !streams.isEmpty else { return }
        var subjects: [String] = []
        var wrappedKeys: [String] = []
        var appends: [PreparedAppend] = []
        for stream in streams {
            try PreparedAppend.validate(stream.events)
            let key = try DataKey.generate()
            subjects.append(stream.subjectID.lowercased)
            wrappedKeys.append(Hex.encode(try keyring.masterKey.wrap(key, subjectID: stream.subjectID)))
            appends.append(
                try PreparedAppend(
                    streamID: stream.streamID, streamType: stream.streamType, subjectID: stream.subjectID, expected: .exact(0),
                    events: stream.events, key: key))
        }
        connection.queue(
            """
            INSERT INTO subject_keys (subject_id, wrapped_key, master_key_id)
            SELECT s, decode(k, 'hex'), $3 FROM unnest($1::uuid[], $2::text[]) AS t(s, k)
            """,
            [.text(PostgresArray.literal(subjects)), .text(PostgresArray.literal(wrappedKeys)), .text(keyring.masterKey.keyID)])
        // `ledger_append_batch`'s arguments but the expectations (every stream is new).
        var parameters = PreparedAppend.batchParameters(appends, recordedAt: recordedAt)
        parameters.removeSubrange(2...3)
        connection.queue(
            """
            SELECT ledger_append_new_streams($1::uuid[], $2::text[], $3::uuid[], $4::int[], $5, $6::uuid[], $7::text[],
                                             $8::int[], $9, $10::int[], $11::jsonb)
            """, parameters, translate: { Self.translate($0) })
    }
}
