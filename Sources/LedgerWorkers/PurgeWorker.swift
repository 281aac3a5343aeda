import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import Logging

/// Purges deleted accounts whose `purge_after` has passed (docs/architecture.md "Event store rules", "Deletion").
///
/// Each account is purged in one transaction: append `account.purged` (unencrypted, no
/// personal data), destroy the account's data key (its payloads become unreadable everywhere,
/// and in backups once those taken before age out: docs/backups.md, while the hash chain still
/// verifies), and delete what the projections and
/// the outbox hold about it. A crash at any point rolls the whole purge back, so the next pass
/// simply does it again; `FOR UPDATE SKIP LOCKED` on the schedule lets several workers run at
/// once without purging one account twice. `serve` runs it through `PurgeLeadership` (one
/// instance at a time); `ledger purge` runs it once, or every `--interval` with `--watch`.
public struct PurgeWorker: Sendable {
    let store: EventStore
    let clock: any LedgerClock
    let logger: Logger
    /// Called between the key's destruction and the `account.purged` append: tests throw here
    /// to play a crash at the worst moment.
    let afterKeyDestruction: (@Sendable (UUID) throws -> Void)?
    /// Deletes what outlived its use, once a pass (nil: nothing is swept).
    let retention: RetentionSweep?
    /// Schedules, once a pass, the deletions holds blocked when they were asked for (nil: not
    /// here; it needs the master key, to read the account and seal the events).
    let accounts: AccountService?
    /// Tables whose rows about a purged account are removed.
    static let accountTables = [
        "sessions", "spent_refresh_tokens", "email_links", "otp_requests", "outbox", "signup_cooldowns", "hold_lapses",
        "passkey_credentials", "avatars", "accounts",
    ]

    public init(
        store: EventStore, clock: any LedgerClock, logger: Logger = Logger(label: "ledger.purge"),
        retention: RetentionSweep? = nil, accounts: AccountService? = nil, afterKeyDestruction: (@Sendable (UUID) throws -> Void)? = nil
    ) {
        self.retention = retention
        self.accounts = accounts
        self.afterKeyDestruction = afterKeyDestruction
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// Accounts due now, oldest first (for `--dry-run`).
    public func due(limit: Int = 1000) async throws -> [(accountID: UUID, purgeAfter: Date)] {
        let rows = try await store.client.query(
            "SELECT account_id, purge_after FROM accounts WHERE purge_after <= $1 ORDER BY purge_after LIMIT $2",
            [.timestamp(clock.now()), .int(Int64(limit))])
        return try rows.rows.compactMap { row in
            guard let id = try row.uuid(0), let due = try row.date(1) else { return nil }
            return (id, due)
        }
    }

    /// A due account whose stream lock this transaction now holds; nil when none is free.
    ///
    /// The stream lock comes first, before any row lock or write, as on every other write path
    /// (docs/architecture.md "Event store rules"): a `FOR UPDATE` on the `accounts` row first would take the locks in the
    /// opposite order from a command on the same account. A candidate is checked again under the
    /// lock, since another worker may have purged it in between.
    private static func claimDueAccount(at now: Date, on connection: PostgresConnection) async throws -> (UUID, Date?, String?)? {
        let candidates = try await connection.query(
            "SELECT account_id FROM accounts WHERE purge_after <= $1 ORDER BY purge_after LIMIT 16", [.timestamp(now)])
        for row in candidates.rows {
            guard let accountID = try row.uuid(0) else { continue }
            let locked = try await connection.query(
                "SELECT pg_try_advisory_xact_lock(ledger_stream_lock_key($1))", [.uuid(accountID)])
            guard try locked[0].bool(0) == true else { continue }
            let due = try await connection.query(
                "SELECT deleted_at, email FROM accounts WHERE account_id = $1 AND purge_after <= $2", [.uuid(accountID), .timestamp(now)])
            if due.rowCount == 1 { return (accountID, try due[0].date(0), due[0].string(1)) }
        }
        return nil
    }

    /// Purges one due account; nil when none is due (or every due one is taken by another worker).
    public func purgeNext() async throws -> UUID? {
        let now = clock.now()
        let purged: UUID? = try await store.client.transaction { connection in
            guard let (accountID, deletedAt, email) = try await Self.claimDueAccount(at: now, on: connection) else { return nil }
            let version = try await connection.query("SELECT version FROM streams WHERE stream_id = $1", [.uuid(accountID)])
            // Every delete goes by an index (schema/016), and the append comes last, so the
            // transaction holds the feed back for as short a time as it can.
            try await connection.query(
                "DELETE FROM login_throttle WHERE key = ANY($1::text[])",
                [.textArray(LoginThrottle.rowKeys(email: email, accountID: accountID))])
            for table in Self.accountTables {
                // A provider revocation still on its way stays: it holds only a token sealed under a
                // key of the master key's, and the grant must end at the provider all the same.
                let pendingRevocations =
                    table == "outbox" ? " AND NOT (channel = 'provider' AND delivered_at IS NULL AND failed_at IS NULL)" : ""
                try await connection.query("DELETE FROM \(table) WHERE account_id = $1\(pendingRevocations)", [.uuid(accountID)])
            }
            // Already unreadable without the key; deleted so nothing of the account's state stays.
            try await connection.query("DELETE FROM stream_snapshots WHERE stream_id = $1", [.uuid(accountID)])
            try await store.keyring.destroy(subjectID: accountID, at: now, on: connection)
            try afterKeyDestruction?(accountID)
            let event = AccountEvent.purged(.init(deletedAt: deletedAt))
            try await store.append(
                to: accountID, streamType: "account", subjectID: nil,
                expected: .exact(version.rowCount == 1 ? try version[0].int(0) ?? 0 : 0),
                events: [
                    NewEvent(
                        type: event.type, schemaVersion: event.schemaVersion, payload: try event.encodedPayload(),
                        metadata: EventMetadata(actor: "system:purge"))
                ],
                recordedAt: now, on: connection)
            return accountID
        }
        if purged != nil { store.committed() }
        return purged
    }

    /// Purges until nothing is due (or `limit` accounts), reporting each one, then sweeps what
    /// outlived its use.
    @discardableResult
    public func runOnce(limit: Int = .max, progress: (Int, UUID) -> Void = { _, _ in }) async throws -> Int {
        var count = 0
        var purgeFailure: (any Error)?
        do {
            try await scheduleRequestedDeletions()
        } catch {
            // Scheduling reads accounts and seals events; a failure there must not stop the
            // purges already due.
            purgeFailure = error
        }
        do {
            while count < limit, let accountID = try await purgeNext() {
                count += 1
                progress(count, accountID)
            }
        } catch {
            // One account that cannot be purged must not keep everything else from its end.
            purgeFailure = purgeFailure ?? error
        }
        if let retention {
            let swept = try await retention.run().filter { $0.value > 0 }
            if !swept.isEmpty { logger.info("retention swept rows", metadata: ["rows": "\(swept)"]) }
        }
        if let purgeFailure { throw purgeFailure }
        return count
    }

    /// Schedules every requested deletion whose holds have lapsed or been released; returns how
    /// many it scheduled (0 without `accounts`). One account that fails is left for the next
    /// pass, after the others; the first failure is thrown at the end.
    @discardableResult
    public func scheduleRequestedDeletions() async throws -> Int {
        guard let accounts else { return 0 }
        let rows = try await store.client.query(
            "SELECT account_id FROM accounts WHERE deletion_requested_at IS NOT NULL AND deleted_at IS NULL ORDER BY deletion_requested_at LIMIT 1000"
        )
        var scheduled = 0
        var failure: (any Error)?
        for accountID in try rows.rows.compactMap({ try $0.uuid(0) }) {
            do {
                if try await accounts.completeRequestedDeletion(accountID) {
                    scheduled += 1
                    logger.info("requested deletion scheduled", metadata: ["account_id": "\(accountID.lowercased)"])
                }
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return scheduled
    }
}
