import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres

/// An append with its payloads sealed and its arguments laid out for `ledger_append`.
struct PreparedAppend: Sendable {
    let streamID: UUID
    let streamType: String
    let subjectID: UUID?
    let expected: ExpectedVersion
    let eventIDs: [UUID]
    let types: [String]
    let schemaVersions: [Int]
    let payloads: [UInt8]
    let lengths: [Int]
    /// A JSON array of the events' metadata objects.
    let metadataJSON: String

    static func validate(_ events: [NewEvent]) throws {
        guard !events.isEmpty else { throw EventStoreError(.invalidEvent, "an append needs at least one event") }
        for event in events where !NewEvent.isValidType(event.type) || event.schemaVersion < 1 {
            throw EventStoreError(.invalidEvent, "event type '\(event.type)' is not lower snake case, dot-separated")
        }
    }

    init(
        streamID: UUID, streamType: String, subjectID: UUID?, expected: ExpectedVersion, events: [NewEvent], key: DataKey?
    ) throws {
        self.streamID = streamID
        self.streamType = streamType
        self.subjectID = subjectID
        self.expected = expected
        eventIDs = events.map(\.eventID)
        types = events.map(\.type)
        schemaVersions = events.map(\.schemaVersion)
        var payloads: [UInt8] = []
        var lengths: [Int] = []
        for event in events {
            let stored = try key.map { try $0.seal(event.payload, eventID: event.eventID) } ?? event.payload
            payloads.append(contentsOf: stored)
            lengths.append(stored.count)
        }
        self.payloads = payloads
        self.lengths = lengths
        metadataJSON = "[" + events.map { $0.metadata.sealed(with: key).json }.joined(separator: ",") + "]"
    }

    /// One append, one round trip.
    static let singleSQL =
        "SELECT * FROM ledger_append($1, $2, $3, $4, $5, $6, $7::uuid[], $8::text[], $9::int[], $10, $11::int[], $12::jsonb)"

    /// Several appends in one transaction, set-based (schema/012).
    static let batchSQL = batchCall("ledger_append_batch")

    /// Several appends in one transaction, each in its own subtransaction: the way for a
    /// batch that meets an event id stored before.
    static let eachSQL = batchCall("ledger_append_each")

    private static func batchCall(_ function: String) -> String {
        """
        SELECT * FROM \(function)($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::uuid[], $6::int[], $7,
                                  $8::uuid[], $9::text[], $10::int[], $11, $12::int[], $13::jsonb)
        """
    }

    /// Reads `first_version, last_version, first_position, last_position, replayed` from
    /// `row`, starting at column `offset` (1 for `ledger_append_batch`, whose column 0 is the ordinal).
    func result(_ row: PostgresRow, offset: Int = 0) throws -> AppendResult {
        AppendResult(
            streamID: streamID,
            firstVersion: try row.int(offset) ?? 0, lastVersion: try row.int(offset + 1) ?? 0,
            firstPosition: try row.int(offset + 2) ?? 0, lastPosition: try row.int(offset + 3) ?? 0,
            replayed: try row.bool(offset + 4) ?? false)
    }

    /// The twelve arguments of `ledger_append`.
    func singleParameters(recordedAt: Date) -> [PostgresParameter] {
        [
            .uuid(streamID), .text(streamType), .text(expected.sqlKind), .int(expected.sqlVersion),
            subjectID.map { .uuid($0) } ?? .null, .timestamp(recordedAt),
            .text(PostgresArray.literal(eventIDs.map(\.lowercased))),
            .text(PostgresArray.literal(types)),
            .text(PostgresArray.literal(schemaVersions.map(String.init))),
            .bytea(payloads),
            .text(PostgresArray.literal(lengths.map(String.init))),
            .text(metadataJSON),
        ]
    }

    /// The thirteen arguments of `ledger_append_batch` for several appends.
    static func batchParameters(_ appends: [PreparedAppend], recordedAt: Date) -> [PostgresParameter] {
        let subjects = appends.map { $0.subjectID?.lowercased ?? "NULL" }
        var payloads: [UInt8] = []
        for append in appends { payloads.append(contentsOf: append.payloads) }
        return [
            .text(PostgresArray.literal(appends.map(\.streamID.lowercased))),
            .text(PostgresArray.literal(appends.map(\.streamType), quoted: true)),
            .text(PostgresArray.literal(appends.map(\.expected.sqlKind))),
            .text(PostgresArray.literal(appends.map { String($0.expected.sqlVersion) })),
            .text(PostgresArray.literal(subjects)),
            .text(PostgresArray.literal(appends.map { String($0.eventIDs.count) })),
            .timestamp(recordedAt),
            .text(PostgresArray.literal(appends.flatMap { $0.eventIDs.map(\.lowercased) })),
            .text(PostgresArray.literal(appends.flatMap(\.types))),
            .text(PostgresArray.literal(appends.flatMap { $0.schemaVersions.map(String.init) })),
            .bytea(payloads),
            .text(PostgresArray.literal(appends.flatMap { $0.lengths.map(String.init) })),
            .text("[" + appends.map(\.metadataJSON).joined(separator: ",") + "]"),
        ]
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
