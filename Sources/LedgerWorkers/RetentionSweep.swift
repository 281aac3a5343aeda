import Foundation
import LedgerAccountsPostgres
import LedgerCore
import LedgerPostgres

/// Deletes what the service keeps only while it serves a purpose (nothing personal outlives
/// its use: docs/accounts.md): throttle counters once their windows and lockouts are over, code requests
/// (a number, a client) once the daily wrong-code window has passed them, settled messages, and
/// used or expired email links. Runs in the purge worker's passes; deletes in bounded batches,
/// each its own short transaction, so a large backlog never holds the feed back.
public struct RetentionSweep: Sendable {
    public struct Policy: Sendable, Equatable {
        /// Throttle rows this long after their window began (every window and lockout is at
        /// most a day), unless still locked.
        public var throttleRows: TimeInterval = 86_400
        /// Code requests this long after they were made (at least the daily wrong-code window).
        public var otpRequests: TimeInterval = 86_400
        /// Messages this long after they were delivered.
        public var outboxMessages: TimeInterval = 3_600
        /// Messages given up this long after (a masked recipient and the error are all they keep,
        /// for `ledger deliveries list --failed`).
        public var failedMessages: TimeInterval = 7 * 86_400
        /// Email links this long after they expired.
        public var emailLinks: TimeInterval = 86_400
        /// Apple notification ids this long after they were acted on (longer than the oldest
        /// notification accepted, `Policies.appleNotificationMaxAge`).
        public var appleNotifications: TimeInterval = 2 * 86_400
        /// Spent passkey challenges this long after they would have expired (they are refused by
        /// their sealed expiry by then anyway).
        public var spentPasskeyChallenges: TimeInterval = 3_600
        /// Rows per delete.
        public var batchSize = 1_000

        public init() {}

        /// What a projections rebuild at `now` leaves out: the code requests and email links
        /// this sweep would delete, so a rebuild never brings them back.
        public func projectionExpiry(at now: Date) -> AccountProjections.Expiry {
            AccountProjections.Expiry(
                otpRequestsMadeBefore: now.addingTimeInterval(-otpRequests), emailLinksExpiredBefore: now.addingTimeInterval(-emailLinks))
        }
    }

    let client: PostgresClient
    let clock: any LedgerClock
    public let policy: Policy

    public init(client: PostgresClient, clock: any LedgerClock, policy: Policy = Policy()) {
        self.client = client
        self.clock = clock
        self.policy = policy
    }

    /// Each table's condition for a row that may go, given its cut-off (`$1`) and, where it
    /// says so, now (`$3`), with how long its rows stay.
    var rules: [(table: String, condition: String, age: TimeInterval, readsNow: Bool)] {
        [
            ("login_throttle", "window_started < $1 AND (locked_until IS NULL OR locked_until < $3)", policy.throttleRows, true),
            ("otp_requests", "created_at < $1", policy.otpRequests, false),
            ("outbox", "delivered_at < $1", policy.outboxMessages, false),
            ("outbox", "failed_at < $1", policy.failedMessages, false),
            ("email_links", "expires_at < $1", policy.emailLinks, false),
            ("apple_notifications", "received_at < $1", policy.appleNotifications, false),
            ("spent_passkey_challenges", "expires_at < $1", policy.spentPasskeyChallenges, false),
        ]
    }

    /// Deletes every row past its time, then destroys the data keys of code requests that
    /// never became an account; returns how many rows went (keys destroyed), by table.
    @discardableResult
    public func run() async throws -> [String: Int] {
        let now = clock.now()
        var deleted: [String: Int] = [:]
        for rule in rules {
            deleted[rule.table, default: 0] += try await batched(
                """
                WITH gone AS (
                    DELETE FROM \(rule.table) WHERE ctid IN (
                        SELECT ctid FROM \(rule.table) WHERE \(rule.condition) LIMIT $2)
                    RETURNING 1)
                SELECT count(*) FROM gone
                """,
                [.timestamp(now.addingTimeInterval(-rule.age))] + (rule.readsNow ? [.timestamp(now)] : []))
        }
        // A number typed for a sign-in code and abandoned: its requests' events are sealed under
        // a key of the account that was never made. Once the requests' rows are gone (their day
        // is over) and no account has that id, the key goes too, and the number with it. Only
        // keys of the last 30 days are looked at (by index): the sweep runs every few minutes,
        // so an abandoned key is at most a few days old when it is found. Not a key of the last
        // hour: a new request's key commits before its event and row do (the payload is sealed
        // first), and destroying it then would leave that request's event unreadable. The hour
        // is the database's, as `created_at` is.
        deleted["subject_keys"] = try await batched(
            """
            WITH gone AS (
                UPDATE subject_keys SET wrapped_key = NULL, destroyed_at = $1 WHERE subject_id IN (
                    SELECT k.subject_id FROM subject_keys k
                    WHERE k.wrapped_key IS NOT NULL AND k.created_at > now() - interval '30 days'
                      AND k.created_at < now() - interval '1 hour'
                      AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.account_id = k.subject_id)
                      AND NOT EXISTS (SELECT 1 FROM otp_requests o WHERE o.account_id = k.subject_id)
                    LIMIT $2)
                RETURNING 1)
            SELECT count(*) FROM gone
            """,
            [.timestamp(now)])
        // An address add-with-password waited for whose link expired unused: someone's address
        // with no purpose left. Gone with its link, on the links' schedule (a rebuild leaves it
        // out by the same cut-off: `AccountProjector.leaveOut`).
        deleted["accounts.pending_email"] = try await batched(
            """
            WITH gone AS (
                UPDATE accounts SET pending_email = NULL, pending_email_expires_at = NULL WHERE account_id IN (
                    SELECT account_id FROM accounts WHERE pending_email_expires_at < $1 LIMIT $2)
                RETURNING 1)
            SELECT count(*) FROM gone
            """,
            [.timestamp(now.addingTimeInterval(-policy.emailLinks))])
        return deleted
    }

    /// Runs a statement that works through at most `batchSize` rows (`$2`; `parameters` are `$1`
    /// and from `$3` on) until a run does fewer; returns the rows done.
    private func batched(_ sql: String, _ parameters: [PostgresParameter]) async throws -> Int {
        var total = 0
        while true {
            var bound = parameters
            bound.insert(.int(Int64(policy.batchSize)), at: 1)
            let rows = try await client.query(sql, bound)
            let count = Int(try rows[0].int(0) ?? 0)
            total += count
            if count < policy.batchSize { return total }
        }
    }
}
