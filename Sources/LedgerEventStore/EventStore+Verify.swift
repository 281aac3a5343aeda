import Foundation
import LedgerCrypto
import LedgerPostgres

extension EventStore {
    /// Recomputes a stream's hash chain from its stored rows and names the first bad position:
    /// a payload that no longer matches its digest, a hash that does not follow from the event
    /// and its predecessor, a missing version, or events of a stream that was never registered.
    /// A row deleted from the stream's end leaves a shorter chain that holds: a signed
    /// checkpoint, which records every head, finds that (`verifyCheckpoint`).
    public func verify(streamID: UUID) async throws -> ChainVerification {
        try await client.withConnection { connection in
            let catalog = try await connection.query("SELECT 1 FROM stream_catalog WHERE stream_id = $1", [.uuid(streamID)])
            return try await verify(streamID, registered: catalog.rowCount == 1, on: connection)
        }
    }

    /// `verify(streamID:)` for a caller that knows already whether the stream is registered
    /// (`verifyAll` lists the catalog): no catalog probe.
    private func verify(_ streamID: UUID, registered: Bool, on connection: PostgresConnection) async throws -> ChainVerification {
        let walk = try await walkChain(streamID, on: connection)
        let checked = walk.checked
        func failure(_ version: Int64, _ reason: String) -> ChainVerification {
            ChainVerification(streamID: streamID, ok: false, events: checked, firstBadVersion: version, reason: reason)
        }
        if let broken = walk.failure { return failure(broken.version, broken.reason) }
        if !registered && checked > 0 {
            return failure(1, "events exist for a stream that was never registered")
        }
        return ChainVerification(streamID: streamID, ok: true, events: checked, firstBadVersion: nil, reason: nil)
    }

    /// Verifies every stream, the registered ones and any with events but no catalog row;
    /// returns the failures (empty when all verify) and the count checked.
    public func verifyAll() async throws -> (streams: Int, failures: [ChainVerification]) {
        var failures: [ChainVerification] = []
        var count = 0
        var after = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
        while true {
            let page = try await client.query(
                """
                SELECT stream_id FROM stream_catalog WHERE stream_id > $1 ORDER BY stream_id LIMIT 1000
                """,
                [.uuid(after)])
            if page.rowCount == 0 { break }
            for row in page.rows {
                guard let streamID = try row.uuid(0) else { continue }
                count += 1
                let verification = try await client.withConnection { try await verify(streamID, registered: true, on: $0) }
                if !verification.ok { failures.append(verification) }
                after = streamID
            }
        }
        // Streams with events but no catalog row, which the pages above cannot name: a skip
        // over the events' primary key, one probe a stream.
        let unregistered = try await client.query(
            """
            WITH RECURSIVE ids AS (
                (SELECT stream_id AS id FROM events ORDER BY stream_id LIMIT 1)
                UNION ALL
                SELECT (SELECT e.stream_id FROM events e WHERE e.stream_id > ids.id ORDER BY e.stream_id LIMIT 1)
                FROM ids WHERE ids.id IS NOT NULL)
            SELECT id FROM ids
            WHERE id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM stream_catalog c WHERE c.stream_id = ids.id)
            """)
        for row in unregistered.rows {
            guard let streamID = try row.uuid(0) else { continue }
            count += 1
            failures.append(try await client.withConnection { try await verify(streamID, registered: false, on: $0) })
        }
        return (count, failures)
    }
}
