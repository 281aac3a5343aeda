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
        metadataJSON = "[" + events.map(\.metadata.json).joined(separator: ",") + "]"
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

/// Text literals of one-dimensional PostgreSQL arrays.
enum PostgresArray {
    /// `{a,b,c}`. Elements are written bare unless `quoted`, which double-quotes and escapes
    /// them (for free text such as stream types); the bare word NULL stays a NULL.
    static func literal(_ elements: [String], quoted: Bool = false) -> String {
        guard quoted else { return "{" + elements.joined(separator: ",") + "}" }
        let escaped = elements.map { element in
            "\"" + element.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "{" + escaped.joined(separator: ",") + "}"
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
