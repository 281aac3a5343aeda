import Foundation
import LedgerCrypto
import LedgerPostgres
import Synchronization

/// Per-subject data keys: created on first use, stored wrapped by the master key, cached
/// unwrapped in memory for writers, and destroyed to crypto-shred a subject.
///
/// Readers always fetch wrapped keys from the database, so a key destroyed by another
/// instance is honoured at once; a writer's cached key cannot resurrect a subject either,
/// because `ledger_append` refuses subjects whose key is gone. A key this process destroyed
/// is never cached again, not even by a read that began before the destruction committed.
public final class SubjectKeyring: Sendable {
    public let masterKey: MasterKey
    private let cache = KeyCache(capacity: 50_000)

    public init(masterKey: MasterKey) {
        self.masterKey = masterKey
    }

    /// The subject's data key, created when it has none yet.
    ///
    /// Inside a transaction, the caller must already hold the stream's advisory lock: this
    /// may write, and a transaction's first write must come after the lock (docs/architecture.md "Event store rules").
    public func dataKey(for subjectID: UUID, on connection: PostgresConnection) async throws -> DataKey {
        if let key = cache.get(subjectID) { return key }
        for _ in 0..<3 {
            let found = try await connection.query(
                "SELECT wrapped_key, destroyed_at IS NOT NULL FROM subject_keys WHERE subject_id = $1",
                [.uuid(subjectID)])
            if found.rowCount == 1 {
                guard let wrapped = try found[0].bytes(0) else {
                    throw EventStoreError(.subjectKeyDestroyed, "the subject's data key was destroyed")
                }
                let key = try unwrap(wrapped, subjectID: subjectID)
                cache.set(subjectID, key)
                return key
            }
            let wrapped = try masterKey.wrap(try DataKey.generate(), subjectID: subjectID)
            try await connection.query(
                """
                INSERT INTO subject_keys (subject_id, wrapped_key, master_key_id) VALUES ($1, $2, $3)
                ON CONFLICT (subject_id) DO NOTHING
                """,
                [.uuid(subjectID), .bytea(wrapped), .text(masterKey.keyID)])
        }
        throw EventStoreError(.undecryptable, "could not create a data key for the subject")
    }

    /// Throws (`undecryptable`) when this keyring's master key cannot open the store's data
    /// keys: every read of an existing subject would fail. There is one master key per store,
    /// so unwrapping one live key tells (and costs one row).
    public func checkMasterKey(client: PostgresClient) async throws {
        let rows = try await client.query("SELECT subject_id, wrapped_key FROM subject_keys WHERE wrapped_key IS NOT NULL LIMIT 1")
        guard rows.rowCount == 1, let subjectID = try rows[0].uuid(0), let wrapped = try rows[0].bytes(1) else { return }
        _ = try unwrap(wrapped, subjectID: subjectID)
    }

    /// The subject's key when this process has it cached, without touching the database.
    func cachedKey(for subjectID: UUID) -> DataKey? {
        cache.get(subjectID)
    }

    /// Destroys the subject's key: every payload sealed with it becomes unreadable for good.
    /// Returns false when it was already destroyed or never existed.
    @discardableResult
    public func destroy(subjectID: UUID, at time: Date, on connection: PostgresConnection) async throws -> Bool {
        cache.forget(subjectID)
        let result = try await connection.query(
            """
            UPDATE subject_keys SET wrapped_key = NULL, destroyed_at = $2
            WHERE subject_id = $1 AND wrapped_key IS NOT NULL
            """,
            [.uuid(subjectID), .timestamp(time)])
        return result.affectedRows == 1
    }

    /// The live keys of the given subjects, read fresh from the database (destroyed or
    /// unknown subjects are absent).
    func liveKeys(for subjectIDs: Set<UUID>, on connection: PostgresConnection) async throws -> [UUID: DataKey] {
        guard !subjectIDs.isEmpty else { return [:] }
        let result = try await connection.query(
            "SELECT subject_id, wrapped_key FROM subject_keys WHERE subject_id = ANY($1::uuid[]) AND wrapped_key IS NOT NULL",
            [.uuidArray(subjectIDs)])
        var wrappedKeys: [UUID: [UInt8]] = [:]
        for row in result.rows {
            guard let subjectID = try row.uuid(0), let wrapped = try row.bytes(1) else { continue }
            wrappedKeys[subjectID] = wrapped
        }
        return try unwrap(wrappedKeys)
    }

    /// Live keys the caller read, still wrapped, by subject.
    func unwrap(_ wrappedKeys: [UUID: [UInt8]]) throws -> [UUID: DataKey] {
        var keys: [UUID: DataKey] = [:]
        for (subjectID, wrapped) in wrappedKeys { keys[subjectID] = try unwrap(wrapped, subjectID: subjectID) }
        return keys
    }

    private func unwrap(_ wrapped: [UInt8], subjectID: UUID) throws -> DataKey {
        do {
            return try masterKey.unwrap(wrapped, subjectID: subjectID)
        } catch let error as CryptoError {
            throw EventStoreError(.undecryptable, "cannot unwrap the subject's data key: \(error.reason)")
        }
    }
}

/// A bounded map of unwrapped keys; cleared wholesale when full (keys are cheap to re-read).
///
/// Destroyed subjects are remembered: a key read from a snapshot taken before its destruction
/// committed (a concurrent `dataKey`) would otherwise be cached after `forget`, and the purged
/// key would stay in this process's memory.
private final class KeyCache: Sendable {
    private let state = Mutex<(keys: [UUID: DataKey], forgotten: Set<UUID>)>(([:], []))
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func get(_ id: UUID) -> DataKey? { state.withLock { $0.keys[id] } }

    func set(_ id: UUID, _ key: DataKey) {
        state.withLock { state in
            guard !state.forgotten.contains(id) else { return }
            if state.keys.count >= capacity { state.keys.removeAll(keepingCapacity: true) }
            state.keys[id] = key
        }
    }

    /// Drops the subject's key and never caches it again. A destruction rolled back only costs
    /// the subject its cache: its key is read from the database each time.
    func forget(_ id: UUID) {
        state.withLock { state in
            state.keys.removeValue(forKey: id)
            if state.forgotten.count >= capacity { state.forgotten.removeAll(keepingCapacity: true) }
            state.forgotten.insert(id)
        }
    }
}
