import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres

/// A stream's folded state after `version`, in the caller's own encoding.
public struct StreamSnapshot: Sendable {
    public let version: Int64
    /// The latest `recorded_at` of versions 1...`version`: the snapshot is the state at any
    /// instant from then until the next event.
    public let lastRecordedAt: Date
    public let state: [UInt8]

    public init(version: Int64, lastRecordedAt: Date, state: [UInt8]) {
        self.version = version
        self.lastRecordedAt = lastRecordedAt
        self.state = state
    }
}

extension EventStore {
    /// Stores a snapshot sealed with the subject's data key and bound to the stream, version
    /// and format (a sealed state cannot be moved to another row). An existing snapshot of
    /// that version is kept. Returns false, storing nothing, when the subject's key is gone.
    @discardableResult
    public func saveSnapshot(
        _ snapshot: StreamSnapshot, streamID: UUID, subjectID: UUID, format: Int, on connection: PostgresConnection
    ) async throws -> Bool {
        guard let key = try await keyring.liveKeys(for: [subjectID], on: connection)[subjectID] else { return false }
        let sealed = try key.seal(snapshot.state, associatedData: Self.snapshotBinding(streamID, snapshot.version, format))
        try await connection.query(
            """
            INSERT INTO stream_snapshots (stream_id, version, format, last_recorded_at, sealed) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (stream_id, version) DO NOTHING
            """,
            [.uuid(streamID), .int(snapshot.version), .int(Int64(format)), .timestamp(snapshot.lastRecordedAt), .bytea(sealed)])
        return true
    }

    /// The newest snapshot of `format` taken no later than `at` (its whole prefix recorded by
    /// then; any, when `at` is nil), opened; nil when there is none or the key is gone.
    public func latestSnapshot(
        streamID: UUID, subjectID: UUID, format: Int, recordedBy at: Date?, on connection: PostgresConnection
    ) async throws -> StreamSnapshot? {
        // Binary results: a long account's sealed state is megabytes, which hex would double.
        let rows = try await connection.queryBinary(
            """
            SELECT version, last_recorded_at, sealed FROM stream_snapshots
            WHERE stream_id = $1 AND format = $2 AND ($3::timestamptz IS NULL OR last_recorded_at <= $3)
            ORDER BY version DESC LIMIT 1
            """,
            [.uuid(streamID), .int(Int64(format)), at.map { .timestamp($0) } ?? .null])
        guard rows.rowCount == 1, let version = try rows[0].binaryInteger(0), let lastRecordedAt = try rows[0].binaryDate(1),
            let sealed = rows[0].binaryBytes(2),
            let key = try await keyring.liveKeys(for: [subjectID], on: connection)[subjectID]
        else { return nil }
        let state = try key.open(sealed, associatedData: Self.snapshotBinding(streamID, version, format))
        return StreamSnapshot(version: version, lastRecordedAt: lastRecordedAt, state: state)
    }

    static func snapshotBinding(_ streamID: UUID, _ version: Int64, _ format: Int) -> [UInt8] {
        var binding = Array("account-ledger/stream-snapshot/".utf8)
        binding += streamID.bytes
        withUnsafeBytes(of: version.bigEndian) { binding += $0 }
        withUnsafeBytes(of: Int64(format).bigEndian) { binding += $0 }
        return binding
    }
}
