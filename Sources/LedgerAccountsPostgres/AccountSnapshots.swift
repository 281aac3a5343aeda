import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Folds of account streams that start from a snapshot: the state every `interval` versions,
/// sealed with the account's data key (`stream_snapshots`). A command's load and a
/// point-in-time read then fold fewer than `interval` events, however long the history.
///
/// Snapshots are derived data: a command's load stores one when it folded `interval` or more
/// events past the newest, `projections rebuild` rewrites them all, a purge deletes them, and
/// a snapshot that cannot be opened or read is ignored (the fold starts at version 1).
public enum AccountSnapshots {
    public static let interval: Int64 = 1000

    /// The encoding of `AccountState` in snapshots. Bump it whenever the state's fields or
    /// `evolve` change meaning: snapshots of another format are never used.
    static let format = 21

    /// A fold's result, and how much of it came from a snapshot.
    struct Fold {
        var state: AccountState
        var snapshotVersion: Int64 = 0
        /// The latest `recorded_at` folded (nil: no event).
        var lastRecordedAt: Date?

        /// Whether this fold went far enough past its snapshot to store a new one.
        var deservesSnapshot: Bool {
            state.version - snapshotVersion >= AccountSnapshots.interval && state.purgedAt == nil && lastRecordedAt != nil
        }
    }

    /// The account as of its event recorded last by `at` (its latest version when nil); the
    /// first event recorded after `at` ends the fold, so the state is always a prefix.
    ///
    /// A command's load (`at` nil) reads the first page before asking for a snapshot, so the
    /// short streams nearly every account has still cost one query; a point-in-time read,
    /// rare and usually of a long history, asks for the snapshot first.
    static func fold(_ accountID: UUID, at: Date?, store: EventStore, on connection: PostgresConnection) async throws -> Fold {
        func restored() async -> Fold? {
            guard
                let snapshot = try? await store.latestSnapshot(
                    streamID: accountID, subjectID: accountID, format: format, recordedBy: at, on: connection),
                let state = try? decode(snapshot.state), state.accountID == accountID, state.version == snapshot.version
            else { return nil }
            return Fold(state: state, snapshotVersion: snapshot.version, lastRecordedAt: snapshot.lastRecordedAt)
        }
        func page(after fold: Fold) async throws -> [RecordedEvent] {
            try await store.readStream(accountID, fromVersion: fold.state.version + 1, limit: Int(interval), on: connection)
        }
        var fold = Fold(state: AccountState(accountID: accountID))
        if at != nil, let snapshot = await restored() { fold = snapshot }
        var events = try await page(after: fold)
        if at == nil, events.count == Int(interval), let snapshot = await restored() {
            fold = snapshot
            events = try await page(after: fold)
        }
        while true {
            let cut = at.flatMap { at in events.firstIndex { $0.recordedAt > at } } ?? events.endIndex
            let decoded = try await AccountState.decodeConcurrently(events[..<cut])
            for (event, recorded) in zip(decoded, events[..<cut]) {
                fold.state.apply(event, recordedAt: recorded.recordedAt)
                fold.lastRecordedAt = max(fold.lastRecordedAt ?? recorded.recordedAt, recorded.recordedAt)
            }
            if cut < events.endIndex || events.count < Int(interval) { return fold }
            events = try await page(after: fold)
        }
    }

    /// Stores the fold's state as a snapshot when it is due; a purged or keyless account
    /// gets none.
    static func saveIfDue(_ fold: Fold, store: EventStore, on connection: PostgresConnection) async throws {
        guard fold.deservesSnapshot, let lastRecordedAt = fold.lastRecordedAt else { return }
        try await save(fold.state, lastRecordedAt: lastRecordedAt, store: store, on: connection)
    }

    static func save(_ state: AccountState, lastRecordedAt: Date, store: EventStore, on connection: PostgresConnection) async throws {
        let snapshot = StreamSnapshot(version: state.version, lastRecordedAt: lastRecordedAt, state: encode(state))
        try await store.saveSnapshot(snapshot, streamID: state.accountID, subjectID: state.accountID, format: format, on: connection)
    }

    /// The state in the `ByteCodable` format (exact dates, no text to parse): a long account's
    /// state is a megabyte, which JSON took tens of milliseconds to decode.
    static func encode(_ state: AccountState) -> [UInt8] {
        var writer = ByteWriter(capacity: 4096)
        writer.write(state)
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> AccountState {
        var reader = ByteReader(bytes)
        let state = try reader.read(AccountState.self)
        guard reader.isAtEnd else { throw reader.failure("trailing bytes") }
        return state
    }
}
