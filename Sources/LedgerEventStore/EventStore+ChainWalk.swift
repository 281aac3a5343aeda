import Foundation
import LedgerCrypto
import LedgerPostgres

/// How far a stream's chain recomputes from its stored rows, and where it first breaks.
struct ChainWalk: Sendable {
    /// Events that verified, from version 1 on.
    var checked = 0
    /// The hash of the last event that verified (the genesis hash when none did).
    var lastHash = HashChain.genesis
    /// The first version that does not verify and why; nil when every row read verified.
    var failure: (version: Int64, reason: String)?

    /// The last version that verified.
    var lastVersion: Int64 { Int64(checked) }
}

extension EventStore {
    /// Recomputes a stream's chain from its raw rows, version 1 first, up to `throughVersion`
    /// (nil: to the end), stopping at the first event that does not verify: a payload that no
    /// longer matches its digest, a missing version, a `prev_hash` that does not link to the
    /// previous event, or a hash that does not follow from the event's canonical fields.
    ///
    /// Both `verify(streamID:)` and checkpoint verification walk chains through here, so
    /// there is one definition of "this chain holds".
    func walkChain(_ streamID: UUID, through throughVersion: Int64? = nil, on connection: PostgresConnection) async throws -> ChainWalk {
        var walk = ChainWalk()
        var expectedVersion: Int64 = 1
        let lastWanted = throughVersion ?? Int64.max
        let pageSize = 5000
        while expectedVersion <= lastWanted {
            let rows = try await connection.query(
                """
                SELECT stream_version, event_type, schema_version, payload, payload_sha256, metadata::text,
                       (extract(epoch FROM recorded_at) * 1000000)::bigint, prev_hash, hash
                FROM events WHERE stream_id = $1 AND stream_version >= $2 AND stream_version <= $3
                ORDER BY stream_version LIMIT $4
                """,
                [.uuid(streamID), .int(expectedVersion), .int(lastWanted), .int(Int64(pageSize))])
            for row in rows.rows {
                guard let version = try row.int(0), let type = row.string(1), let schemaVersion = try row.int(2),
                    let payload = try row.bytes(3), let digest = try row.bytes(4), let metadata = row.string(5),
                    let micros = try row.int(6), let prevHash = try row.bytes(7), let hash = try row.bytes(8)
                else {
                    walk.failure = (expectedVersion, "an event row has an unexpected NULL")
                    return walk
                }
                if version != expectedVersion {
                    walk.failure = (expectedVersion, "event version \(expectedVersion) is missing")
                    return walk
                }
                if SHA256.hash(payload) != digest {
                    walk.failure = (version, "the payload does not match its recorded digest")
                    return walk
                }
                if prevHash != walk.lastHash {
                    walk.failure = (version, "prev_hash does not match the previous event's hash")
                    return walk
                }
                let link = HashChain.Link(
                    streamID: streamID, version: version, type: type, schemaVersion: Int(schemaVersion),
                    payloadSHA256: digest, metadataText: metadata, recordedAtMicros: micros)
                if HashChain.hash(previous: walk.lastHash, link) != hash {
                    walk.failure = (version, "the event's hash does not match its content")
                    return walk
                }
                walk.lastHash = hash
                walk.checked += 1
                expectedVersion += 1
            }
            if rows.rowCount < pageSize { break }
        }
        if let throughVersion, walk.lastVersion < throughVersion {
            walk.failure = (walk.lastVersion + 1, "event version \(walk.lastVersion + 1) is missing")
        }
        return walk
    }
}
