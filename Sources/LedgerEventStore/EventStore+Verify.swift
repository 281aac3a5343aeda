import Foundation
import LedgerCrypto
import LedgerPostgres

extension EventStore {
    /// Recomputes a stream's hash chain from its stored rows and names the first bad position:
    /// a payload that no longer matches its digest, a hash that does not follow from the event
    /// and its predecessor, a missing version, or a stream head that disagrees with the last event.
    public func verify(streamID: UUID) async throws -> ChainVerification {
        try await client.withConnection { connection in
            let head = try await connection.query(
                "SELECT version, head_hash FROM streams WHERE stream_id = $1", [.uuid(streamID)])
            let headVersion = head.rowCount == 1 ? try head[0].int(0) : nil
            let headHash = head.rowCount == 1 ? try head[0].bytes(1) : nil
            var checked = 0
            var expectedVersion: Int64 = 1
            var previous = HashChain.genesis
            func failure(_ version: Int64, _ reason: String) -> ChainVerification {
                ChainVerification(streamID: streamID, ok: false, events: checked, firstBadVersion: version, reason: reason)
            }
            let pageSize = 5000
            while true {
                let rows = try await connection.query(
                    """
                    SELECT stream_version, event_type, schema_version, payload, payload_sha256, metadata::text,
                           (extract(epoch FROM recorded_at) * 1000000)::bigint, prev_hash, hash
                    FROM events WHERE stream_id = $1 AND stream_version >= $2 ORDER BY stream_version LIMIT $3
                    """,
                    [.uuid(streamID), .int(expectedVersion), .int(Int64(pageSize))])
                for row in rows.rows {
                    guard let version = try row.int(0), let type = row.string(1), let schemaVersion = try row.int(2),
                          let payload = try row.bytes(3), let digest = try row.bytes(4), let metadata = row.string(5),
                          let micros = try row.int(6), let prevHash = try row.bytes(7), let hash = try row.bytes(8)
                    else { return failure(expectedVersion, "an event row has an unexpected NULL") }
                    if version != expectedVersion {
                        return failure(expectedVersion, "event version \(expectedVersion) is missing")
                    }
                    if SHA256.hash(payload) != digest {
                        return failure(version, "the payload does not match its recorded digest")
                    }
                    if prevHash != previous {
                        return failure(version, "prev_hash does not match the previous event's hash")
                    }
                    let link = HashChain.Link(
                        streamID: streamID, version: version, type: type, schemaVersion: Int(schemaVersion),
                        payloadSHA256: digest, metadataText: metadata, recordedAtMicros: micros)
                    if HashChain.hash(previous: previous, link) != hash {
                        return failure(version, "the event's hash does not match its content")
                    }
                    previous = hash
                    expectedVersion += 1
                    checked += 1
                }
                if rows.rowCount < pageSize { break }
            }
            let lastVersion = expectedVersion - 1
            if let headVersion, headVersion != lastVersion {
                return failure(lastVersion + 1, "the stream head is at version \(headVersion), but the last event is \(lastVersion)")
            }
            if let headHash, headHash != previous {
                return failure(lastVersion, "the stream head's hash does not match the last event")
            }
            if headVersion == nil && checked > 0 {
                return failure(1, "events exist for a stream that has no head")
            }
            return ChainVerification(streamID: streamID, ok: true, events: checked, firstBadVersion: nil, reason: nil)
        }
    }

    /// Verifies every stream; returns the failures (empty when all verify) and the count checked.
    public func verifyAll() async throws -> (streams: Int, failures: [ChainVerification]) {
        var failures: [ChainVerification] = []
        var count = 0
        var after = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
        while true {
            let page = try await client.query(
                """
                SELECT stream_id FROM streams WHERE stream_id > $1 ORDER BY stream_id LIMIT 1000
                """,
                [.uuid(after)])
            if page.rowCount == 0 { break }
            for row in page.rows {
                guard let streamID = try row.uuid(0) else { continue }
                count += 1
                let verification = try await verify(streamID: streamID)
                if !verification.ok { failures.append(verification) }
                after = streamID
            }
        }
        return (count, failures)
    }
}
