import Foundation
import LedgerAccounts
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Rebuilds the account projections from the account streams while the service runs, giving
/// exactly the rows the incremental path writes (docs/architecture.md "Event store rules",
/// "Rebuilding projections").
///
/// Fresh tables are built beside the live ones (`ShadowTables`): loaded from every stream
/// as of a feed position, caught up with what the feed shows after it, and swapped in for the
/// live ones in one short transaction. Commands go on meanwhile; only the swap makes them wait,
/// for at most about `SwapPolicy.lockWait` plus `SwapPolicy.budget`.
public enum AccountProjections {
    /// The tables rebuilt; operational tables (outbox, throttles, API keys) are not projections.
    /// In the order commands take them (a command folds from a snapshot, checks claims, then
    /// writes), which the swap locks them in.
    static let tables = [
        "stream_snapshots", "signup_cooldowns", "accounts", "email_links", "sessions", "spent_refresh_tokens", "otp_requests",
        "hold_lapses", "passkey_credentials",
    ]
    /// The load's inserts are plain but for these two (`ON CONFLICT` on their primary keys).
    static let keptPrimaryKeys = ["signup_cooldowns", "stream_snapshots"]

    /// How far a rebuild is.
    public struct Progress: Sendable {
        /// Streams loaded, of all there were at the start.
        public var streamsDone = 0
        public var streamsTotal = 0
        /// Events read by the load.
        public var events = 0
        /// Catch-up rounds run, and the streams they projected again.
        public var catchUpRounds = 0
        public var streamsCaughtUp = 0
        /// Times the swap found the live tables busy (or its catch-up too long) and tried again.
        public var swapRetries = 0
        /// How long the swap held the live tables, once done.
        public var lockHeld: Duration?
        /// The rows left out: the `expiry` asked for, kept back to the oldest live rows.
        public var expiry: Expiry?
        public init() {}
    }

    /// When and how the fresh tables are swapped in. Commands wait for the swap at most
    /// `lockWait` + `budget` (and about one statement more, which the server bounds by `budget`).
    public struct SwapPolicy: Sendable {
        /// How long the swap waits for the live tables; commands that come meanwhile wait behind it.
        public var lockWait: Duration = .milliseconds(150)
        /// How long the last catch-up may hold the locked tables before the swap gives up and
        /// tries again after another round.
        public var budget: Duration = .milliseconds(400)
        /// A round that re-reads at most this many events is small enough to repeat under the
        /// lock (a changed stream is read whole; ~6 s a million events, so 20,000 are ~0.12 s).
        public var smallRound = 20_000
        /// Catch-up rounds before the first try, at most, when writes keep every round large.
        public var maximumRounds = 50
        /// Tries before the rebuild gives up, dropping the fresh tables and changing nothing.
        public var attempts = 30
        /// How long this process may stall between two statements while it holds the tables
        /// before the server ends its session (and the rebuild fails): only a process that
        /// stopped running meets it, since the budget's own checks give up first.
        public var stallLimit: Duration = .seconds(3)
        /// Runs under the locks before the last round (tests: a command made to wait on the swap).
        var whileLocked: (@Sendable () async throws -> Void)?
        /// Runs after each catch-up round outside the locks (tests: commands between two rounds).
        var afterRound: (@Sendable () async throws -> Void)?

        public init() {}
    }

    /// The swap never found the tables quiet enough; the live tables are untouched.
    public struct SwapGaveUp: Error, CustomStringConvertible {
        public let attempts: Int
        public var description: String {
            "the projection tables stayed too busy to swap in \(attempts) tries; the live tables are unchanged, try again later"
        }
    }

    /// Streams read per round trip (a rebuild's batch).
    public static let streamsPerRead = 500

    /// Rebuilds every account and OTP request; returns how many accounts the load replayed.
    /// `progress` is told after every batch, every catch-up round and the swap. `expiry`: the
    /// rows the retention sweep would delete are left out, but none the live tables still hold
    /// (`ledger projections rebuild` passes the sweep's; nil keeps every row the events give).
    /// Rows the sweep deletes while the rebuild runs come back until its next pass.
    ///
    /// 1. **Position.** The feed's head now: every event not in the load comes after it.
    /// 2. **Load.** Every stream, folded whole and projected once into the fresh tables
    ///    (`AccountProjector` writes from the final state and each event's own time, so the rows
    ///    are those the incremental path wrote), with snapshots every `AccountSnapshots.interval`.
    /// 3. **Catch-up.** The streams changed after the position, as one snapshot sees them, are
    ///    projected again; the tables then hold the state of that snapshot, so their unique keys
    ///    can be built. Rounds repeat until one is small.
    /// 4. **Swap.** Under the live tables' locks, a last round, then the swap (`ShadowTables.swap`).
    ///    The replaced tables are dropped after.
    @discardableResult
    public static func rebuild(
        store: EventStore, streamsPerRead: Int = streamsPerRead, swap policy: SwapPolicy = SwapPolicy(), expiry: Expiry? = nil,
        progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws -> Int {
        // Copies left by a session that died (its locks with it): cleaned up on another, once
        // this one is back in the pool (a pool of one has no other).
        var orphaned: ShadowTables?
        do {
            return try await store.client.withConnection { connection in
                try await ShadowTables.exclusively(on: connection, alsoHolding: [SchemaMigrator.lockKey]) {
                    let shadow = try await ShadowTables.prepare(tables, keepingPrimaryKeysOf: keptPrimaryKeys, on: connection)
                    do {
                        var status = Progress()
                        let position = try await store.headCursor(on: connection)
                        let expiry = try await expiry?.keepingLiveRows(on: connection)
                        status.expiry = expiry
                        let accounts = try await load(
                            into: shadow, store: store, batchSize: streamsPerRead, expiry: expiry, status: &status, progress: progress,
                            on: connection)
                        try await shadow.buildSecondaryIndexes(on: connection)
                        var states = FoldedStates()
                        var cursor = try await catchUp(
                            after: position, into: shadow, states: &states, store: store, expiry: expiry, status: &status,
                            on: connection
                        ).head
                        try await policy.afterRound?()
                        try await shadow.buildUniqueKeys(on: connection)
                        try await carryOverClientAddresses(of: nil, into: shadow, on: connection)
                        try await shadow.analyze(on: connection)
                        progress?(status)
                        status.lockHeld = try await swap(
                            shadow, after: &cursor, states: &states, store: store, policy: policy, expiry: expiry,
                            status: &status, progress: progress, on: connection)
                        progress?(status)
                        try await shadow.dropRetired(on: connection)
                        return accounts
                    } catch {
                        if connection.isUsable { try? await shadow.discard(on: connection) } else { orphaned = shadow }
                        throw error
                    }
                }
            }
        } catch {
            if let orphaned {
                // Unless a new rebuild has begun meanwhile.
                try? await store.client.withConnection { fresh in
                    try await ShadowTables.exclusively(on: fresh) { try await orphaned.discard(on: fresh) }
                }
            }
            throw error
        }
    }

    /// Catch-up rounds until one is small, then tries to swap (each failed try is followed by
    /// another round); returns how long the swap held the live tables.
    private static func swap(
        _ shadow: ShadowTables, after cursor: inout FeedCursor, states: inout FoldedStates, store: EventStore, policy: SwapPolicy,
        expiry: Expiry?, status: inout Progress, progress: (@Sendable (Progress) -> Void)?, on connection: PostgresConnection
    ) async throws -> Duration {
        var rounds = 0
        while rounds < policy.maximumRounds {
            let round = try await catchUp(
                after: cursor, into: shadow, states: &states, store: store, expiry: expiry, status: &status, on: connection)
            cursor = round.head
            progress?(status)
            try await policy.afterRound?()
            rounds += 1
            if round.events <= policy.smallRound { break }
        }
        for attempt in 1...max(policy.attempts, 1) {
            let since = cursor
            var finalStatus = status
            let kept = states
            let outcome = try await shadow.swap(
                on: connection, lockWait: policy.lockWait, budget: policy.budget, stallLimit: policy.stallLimit
            ) { locked, deadline in
                // Under the locks nothing that writes these tables commits, so plain reads see
                // one state (no snapshot needed), and every commit before the locks is in it.
                try await policy.whileLocked?()
                try await catchUp(
                    after: since, into: shadow, states: kept, store: store, expiry: expiry, status: &finalStatus,
                    upTo: policy.smallRound, deadline: deadline, lockedOn: locked)
            }
            if case .swapped(let held) = outcome {
                status = finalStatus
                return held
            }
            status.swapRetries = attempt
            // Back off a little (the tables were busy), then catch up what came meanwhile.
            try await Task.sleep(for: policy.lockWait / 2)
            cursor = try await catchUp(
                after: cursor, into: shadow, states: &states, store: store, expiry: expiry, status: &status, on: connection
            ).head
            progress?(status)
        }
        throw SwapGaveUp(attempts: policy.attempts)
    }
}
