import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres

extension EventStore {
    /// Read in binary format (`queryBinary`) and decoded by `decode`.
    static let selectColumns = """
        e.tx_id, e.global_position, e.event_id, e.stream_id, e.stream_version, e.event_type,
        e.schema_version, e.subject_id, e.payload, e.metadata::text, e.recorded_at
        """

    /// Rows per query when a whole stream is read.
    static let streamPageSize = 10_000

    /// The stream's events in version order, from `fromVersion` on: at most `limit`, or every
    /// one however long the history (read in pages; an audit or export is never cut short).
    public func readStream(_ streamID: UUID, fromVersion: Int64 = 1, limit: Int? = nil) async throws -> [RecordedEvent] {
        try await client.withConnection { connection in
            try await readStream(streamID, fromVersion: fromVersion, limit: limit, on: connection)
        }
    }

    public func readStream(
        _ streamID: UUID, fromVersion: Int64 = 1, limit: Int? = nil, on connection: PostgresConnection
    ) async throws -> [RecordedEvent] {
        if let limit { return try await readStreamPage(streamID, fromVersion: fromVersion, limit: limit, on: connection) }
        var events: [RecordedEvent] = []
        var next = fromVersion
        while true {
            let page = try await readStreamPage(streamID, fromVersion: next, limit: Self.streamPageSize, on: connection)
            events += page
            guard page.count == Self.streamPageSize, let last = page.last else { return events }
            next = last.streamVersion + 1
        }
    }

    private func readStreamPage(
        _ streamID: UUID, fromVersion: Int64, limit: Int, on connection: PostgresConnection
    ) async throws -> [RecordedEvent] {
        // A stream's events share their subject, so its live key comes along on each row
        // (reading it with the events, in one snapshot) instead of in a second round trip.
        let result = try await connection.queryBinary(
            """
            SELECT \(Self.selectColumns),
                   (SELECT k.wrapped_key FROM subject_keys k WHERE k.subject_id = e.subject_id AND k.wrapped_key IS NOT NULL)
            FROM events e
            WHERE e.stream_id = $1 AND e.stream_version >= $2 ORDER BY e.stream_version LIMIT $3
            """,
            [.uuid(streamID), .int(fromVersion), .int(Int64(limit))])
        return try await decode(result, keysInColumn: Self.keyColumn, on: connection)
    }

    /// Several streams' whole histories in one query, in the order of `streamIDs` and each
    /// stream in version order (a rebuild reads hundreds of streams per round trip this way);
    /// with `afterVersions` (one per stream), only each stream's events after that version.
    public func readStreams(
        _ streamIDs: [UUID], afterVersions: [Int64]? = nil, on connection: PostgresConnection
    ) async throws -> [RecordedEvent] {
        guard !streamIDs.isEmpty else { return [] }
        // No ORDER BY: sorting a batch cost PostgreSQL more than grouping the rows here.
        let result =
            if let afterVersions {
                try await connection.queryBinary(
                    """
                    SELECT \(Self.selectColumns) FROM unnest($1::uuid[], $2::bigint[]) AS w(stream_id, version)
                    JOIN events e ON e.stream_id = w.stream_id AND e.stream_version > w.version
                    """,
                    [.uuidArray(streamIDs), .text(PostgresArray.literal(afterVersions.map(String.init)))])
            } else {
                try await connection.queryBinary(
                    "SELECT \(Self.selectColumns) FROM events e WHERE e.stream_id = ANY($1::uuid[])", [.uuidArray(streamIDs)])
            }
        let events = try await decode(result, on: connection)
        var rowsOfStream: [UUID: [Int]] = [:]
        rowsOfStream.reserveCapacity(streamIDs.count)
        for (index, event) in events.enumerated() { rowsOfStream[event.streamID, default: []].append(index) }
        var ordered: [RecordedEvent] = []
        ordered.reserveCapacity(events.count)
        for streamID in streamIDs {
            guard var rows = rowsOfStream.removeValue(forKey: streamID) else { continue }
            if !zip(rows, rows.dropFirst()).allSatisfy({ events[$0].streamVersion < events[$1].streamVersion }) {
                rows.sort { events[$0].streamVersion < events[$1].streamVersion }
            }
            for row in rows { ordered.append(events[row]) }
        }
        return ordered
    }

    /// The stream's current version (0 when it does not exist).
    public func streamVersion(_ streamID: UUID) async throws -> Int64 {
        let result = try await client.query("SELECT version FROM streams WHERE stream_id = $1", [.uuid(streamID)])
        return result.rowCount == 0 ? 0 : try result[0].int(0) ?? 0
    }

    /// Events committed after `cursor`, in commit order.
    ///
    /// Only transactions older than every transaction still running are read
    /// (`tx_id < pg_snapshot_xmin(pg_current_snapshot())`), so an event committed later can
    /// never appear before the cursor: a reader may be held back, but never skips.
    public func readAll(after cursor: FeedCursor = .start, limit: Int = 1000, types: [String]? = nil) async throws -> FeedPage {
        try await client.withConnection { connection in
            try await readAll(after: cursor, limit: limit, types: types, on: connection)
        }
    }

    public func readAll(
        after cursor: FeedCursor, limit: Int, types: [String]? = nil, on connection: PostgresConnection
    ) async throws -> FeedPage {
        var parameters: [PostgresParameter] = [.text(String(cursor.transactionID)), .int(cursor.position), .int(Int64(limit))]
        var typeFilter = ""
        if let types, !types.isEmpty {
            typeFilter = "AND e.event_type = ANY($4::text[])"
            parameters.append(.textArray(types.filter(NewEvent.isValidType)))
        }
        // The horizon is read once, before the page, so the page's filter and its
        // "nothing more below the horizon" conclusion agree.
        let result = try await connection.queryBinary(
            """
            WITH horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
            SELECT \(Self.selectColumns) FROM events e
            WHERE (e.tx_id, e.global_position) > ($1::xid8, $2) AND e.tx_id < (SELECT xmin FROM horizon)
            \(typeFilter)
            ORDER BY e.tx_id, e.global_position LIMIT $3
            """,
            parameters)
        let events = try await decode(result, on: connection)
        return FeedPage(events: events, nextCursor: events.last?.cursor ?? cursor)
    }

    /// The cursor of the newest event the feed shows now (`.start` when it shows none): where a
    /// follower that wants only new events begins.
    public func headCursor() async throws -> FeedCursor {
        try await client.withConnection { try await headCursor(on: $0) }
    }

    /// `headCursor` as the connection's snapshot sees it.
    public func headCursor(on connection: PostgresConnection) async throws -> FeedCursor {
        // The transaction id in binary, ordered as xid8: ordered as text ("9" after "10"), an
        // older event would be taken for the newest.
        let rows = try await connection.queryBinary(
            """
            SELECT e.tx_id, e.global_position FROM events e
            WHERE e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
            ORDER BY e.tx_id DESC, e.global_position DESC LIMIT 1
            """, [])
        guard rows.rowCount == 1, let transaction = try rows[0].binaryUnsigned(0), let position = try rows[0].binaryInteger(1) else {
            return .start
        }
        return FeedCursor(transactionID: transaction, position: position)
    }

    /// The streams of `types` with an event after `cursor` that the connection's snapshot sees,
    /// with their versions, in stream-id order; unlike the feed, with no horizon: a commit of a transaction older
    /// than one still running counts too (a catch-up re-reads such streams whole, so seeing
    /// an event early costs nothing and missing one would). The changed events come first, by
    /// the commit-order index (`tx_id >=` gives the planner a range it can estimate), then their
    /// streams by key: never a probe of every stream, which took most of a second at a million events.
    public func streamsChanged(
        after cursor: FeedCursor, types: [String], on connection: PostgresConnection
    ) async throws -> [(streamID: UUID, type: String, version: Int64)] {
        let rows = try await connection.query(
            """
            SELECT s.stream_id, s.stream_type, s.version FROM streams s
            WHERE s.stream_id = ANY (ARRAY(
                    SELECT DISTINCT e.stream_id FROM events e
                    WHERE e.tx_id >= $1::xid8 AND (e.tx_id, e.global_position) > ($1::xid8, $2)))
              AND s.stream_type = ANY($3::text[])
            ORDER BY s.stream_id
            """,
            [.text(String(cursor.transactionID)), .int(cursor.position), .textArray(types)])
        return try rows.rows.compactMap { row in
            guard let id = try row.uuid(0), let type = row.string(1), let version = try row.int(2) else { return nil }
            return (id, type, version)
        }
    }

    /// Where `readStream` puts each row's live wrapped key, after `selectColumns`.
    static let keyColumn = 11

    /// Decodes rows of `selectColumns`, opening payloads with keys read in the same call: from
    /// `keysInColumn` of the rows when the query carried them, else in one more query.
    func decode(_ result: PostgresResult, keysInColumn keyColumn: Int? = nil, on connection: PostgresConnection) async throws
        -> [RecordedEvent]
    {
        let rowCount = result.rowCount
        guard rowCount > 0 else { return [] }
        var subjects = Set<UUID>()
        var wrappedKeys: [UUID: [UInt8]] = [:]
        for index in 0..<rowCount {
            guard let subject = try result[index].binaryUUID(7) else { continue }
            subjects.insert(subject)
            if let keyColumn, wrappedKeys[subject] == nil, let wrapped = result[index].binaryBytes(keyColumn) {
                wrappedKeys[subject] = wrapped
            }
        }
        let keys =
            keyColumn == nil
            ? try await keyring.liveKeys(for: subjects, on: connection)
            : try keyring.unwrap(wrappedKeys)
        var openers: [UUID: DataKey.Opener] = [:]
        var events: [RecordedEvent] = []
        events.reserveCapacity(rowCount)
        for index in 0..<rowCount {
            let row = result[index]
            guard let transactionID = try row.binaryUnsigned(0), let position = try row.binaryInteger(1),
                let eventID = try row.binaryUUID(2), let streamID = try row.binaryUUID(3),
                let version = try row.binaryInteger(4), let type = row.binaryText(5),
                let schemaVersion = try row.binaryInteger(6), let stored = row.binaryBytes(8),
                let metadata = row.binaryText(9), let recordedAt = try row.binaryDate(10)
            else { throw PostgresError(.decoding, message: "an events row has an unexpected NULL") }
            let subjectID = try row.binaryUUID(7)
            var payload: [UInt8]? = stored
            if let subjectID {
                if let key = keys[subjectID] {
                    do {
                        let opener = try openers[subjectID] ?? key.makeOpener()
                        openers[subjectID] = opener
                        payload = try opener.open(stored, eventID: eventID)
                    } catch {
                        throw EventStoreError(
                            .undecryptable, "the payload of event \(eventID) does not decrypt: it was altered")
                    }
                } else {
                    payload = nil
                }
            }
            events.append(
                RecordedEvent(
                    cursor: FeedCursor(transactionID: transactionID, position: position),
                    eventID: eventID, streamID: streamID, streamVersion: version, type: type,
                    schemaVersion: Int(schemaVersion), subjectID: subjectID, payload: payload,
                    metadataJSON: metadata, recordedAt: recordedAt))
        }
        return events
    }
}
