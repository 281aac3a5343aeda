import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import Logging

/// Imported accounts on the event store: a batch in one transaction, its new accounts written
/// together (`+Together`), or, when that write meets a claim its check did not see, each record
/// on a savepoint of its own, so a claim that refuses one leaves the others.
public struct PostgresAccountImports: AccountImportStore {
    let repository: PostgresAccountRepository
    public let statistics: ImportWriteStatistics
    let logger = Logger(label: "ledger.import")

    public init(repository: PostgresAccountRepository, statistics: ImportWriteStatistics = ImportWriteStatistics()) {
        self.repository = repository
        self.statistics = statistics
    }

    /// A dry run's transaction ends here, rolled back, with what it would have done.
    private struct DryRunEnded: Error {
        let results: [ImportResult]
    }

    public func importBatch(_ accounts: [AccountCommand.ImportedAccount], dryRun: Bool) async throws -> [ImportResult] {
        guard !accounts.isEmpty else { return [] }
        let keys = accounts.map { repository.retention.key(.imported(source: $0.source, externalID: $0.externalID)) }
        let now = repository.clock.now()
        // Nobody signed in caused these: the importer did (the API key's service over HTTP).
        var metadata = EventMetadata.current
        metadata.actor = metadata.actor ?? "system:import"
        do {
            let results = try await EventMetadata.$current.withValue(metadata) {
                try await repository.store.client.transaction { connection in
                    let results = try await importBatch(accounts, keys: keys, at: now, on: connection)
                    // Thrown inside, so the transaction rolls back.
                    if dryRun { throw DryRunEnded(results: results) }
                    return results
                }
            }
            if results.contains(where: { if case .imported = $0 { true } else { false } }) { repository.store.committed() }
            return results
        } catch let ended as DryRunEnded {
            return ended.results
        }
    }

    private func importBatch(
        _ accounts: [AccountCommand.ImportedAccount], keys: [[UInt8]], at now: Date, on connection: PostgresConnection
    ) async throws -> [ImportResult] {
        // Every record's key locked first, in one order: a concurrent import of the same record
        // waits here until this one commits, then finds it in.
        Self.queueLocks(Set(keys.map(Hex.encode)).map { "import:" + $0 }, on: connection)
        var lookup = BinaryRecordset()
        for key in keys { lookup.row { $0.field("key", bytes: key) } }
        let rows = try await connection.query(
            "SELECT key_hmac, account_id FROM account_imports WHERE key_hmac IN (SELECT r.key FROM \(lookup.source))",
            lookup.parameters)
        var known: [[UInt8]: UUID] = [:]
        for row in 0..<rows.rowCount {
            if let key = try rows[row].bytes(0), let accountID = try rows[row].uuid(1) { known[key] = accountID }
        }
        // Each record not in yet, once (a second of the same key in the batch follows the first).
        var pending: [Pending] = []
        var firstOffset: [[UInt8]: Int] = [:]
        for (offset, (account, key)) in zip(accounts, keys).enumerated() where known[key] == nil {
            if firstOffset[key] == nil {
                firstOffset[key] = offset
                pending.append(Pending(offset: offset, account: account, key: key))
            }
        }
        var written = try await importTogether(pending, at: now, on: connection)
        if written == nil {
            // One of them met a claim the check before the write did not see: each on its own.
            statistics.tookOneByOne(pending.count)
            var oneByOne: [Int: ImportResult] = [:]
            for record in pending {
                oneByOne[record.offset] = try await importRecord(record.account, key: record.key, at: now, on: connection)
            }
            written = oneByOne
        }
        return keys.enumerated().map { offset, key in
            if let accountID = known[key] { return .skipped(accountID: accountID) }
            let first = firstOffset[key] ?? offset
            let result = written?[first] ?? .refused(.invalidRecord)
            if first != offset, case .imported(let accountID) = result { return .skipped(accountID: accountID) }
            return result
        }
    }

    /// The transaction locks of `names` (the same locks `guardClaims` takes one by one), in one
    /// statement and in one order: a batch's thousands of locks in a single round of the server.
    static func queueLocks(_ names: [String], on connection: PostgresConnection) {
        guard !names.isEmpty else { return }
        connection.queue(
            """
            SELECT count(pg_advisory_xact_lock(hashtextextended(l.name, 0)))
              FROM (SELECT name FROM unnest($1::text[]) AS name ORDER BY name) AS l
            """,
            [.text(PostgresArray.literal(names.sorted(), quoted: true))])
    }

    /// One record on its own savepoint; a generated handle that collides is drawn again.
    private func importRecord(
        _ account: AccountCommand.ImportedAccount, key: [UInt8], at now: Date, on connection: PostgresConnection
    ) async throws -> ImportResult {
        var account = account
        for attempt in 0..<4 {
            // Random, as in a batch (`importTogether`): the first 50 bits are the `usr_…`.
            let accountID = UUID.random()
            // Sent, not queued: a failure before the next statement must find it there.
            _ = try await connection.query("SAVEPOINT import_record")
            do {
                let imported = account
                _ = try await repository.execute(accountID, outbox: [], { _ in .importAccount(imported) }, at: now, on: connection)
                connection.queue(
                    "INSERT INTO account_imports (key_hmac, account_id, imported_at) VALUES ($1, $2, $3)",
                    [.bytea(key), .uuid(accountID), .timestamp(now)])
                _ = try await connection.query("RELEASE SAVEPOINT import_record")
                return .imported(accountID: accountID)
            } catch {
                connection.discardQueued()
                _ = try await connection.query("ROLLBACK TO SAVEPOINT import_record")
                if let taken = error as? ClaimTaken, taken.claim == .handle, attempt < 3 {
                    account.handle = Handle.randomTemporary()
                    continue
                }
                guard let refusal = Self.refusal(error) else { throw error }
                return .refused(refusal)
            }
        }
        return .refused(.invalidRecord)
    }

    /// The reason a record is refused for `error`; nil for an error that is not the record's
    /// (the database went away), which ends the batch.
    static func refusal(_ error: any Error) -> ImportRefusal? {
        if let refusal = ImportRefusal(refusing: error) { return refusal }
        // A value the database will not hold (class 22, data exception; 23, a constraint): this
        // record's fault, not the batch's.
        if let failed = error as? PostgresError, let state = failed.sqlState, state.hasPrefix("22") || state.hasPrefix("23") {
            return .invalidRecord
        }
        return nil
    }
}
