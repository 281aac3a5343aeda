import Foundation
import LedgerAccounts
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

extension AccountProjections {
    /// The streams changed after a feed position, as one snapshot saw them.
    struct Changes {
        /// The feed's head in that snapshot: where the next round starts.
        var head: FeedCursor
        var accounts: [UUID] = []
        var requests: [UUID] = []
        /// Events to read: a stream's new ones when its state is kept, else all of them.
        var events = 0

        var streamCount: Int { accounts.count + requests.count }

        static func read(
            after cursor: FeedCursor, states: FoldedStates, store: EventStore, on connection: PostgresConnection
        ) async throws -> Changes {
            var changes = Changes(head: try await store.headCursor(on: connection))
            let changed = try await store.streamsChanged(
                after: cursor, types: [PostgresAccountRepository.streamType, PostgresOTPRepository.streamType], on: connection)
            for (streamID, type, version) in changed {
                if type == PostgresAccountRepository.streamType {
                    changes.accounts.append(streamID)
                } else {
                    changes.requests.append(streamID)
                }
                changes.events += Int(version - (states.states[streamID]?.state.version ?? 0))
            }
            return changes
        }
    }

    /// The states of the account streams catch-up rounds have folded, at the versions the
    /// fresh tables show. A stream changed again is folded on from here with its new events
    /// only (as a command's are), so an account written all through a rebuild costs each round
    /// its new events, not its whole history again.
    struct FoldedStates: Sendable {
        private(set) var states: [UUID: Folded] = [:]
        /// About how much memory the states take, and at most how much they may.
        private(set) var bytes = 0
        var capacity = 512 << 20

        /// Takes a round's states in once its rows are written: the ones folded on always, new
        /// ones while there is room (a stream left out is folded whole when it changes again).
        mutating func apply(_ folding: Folding) {
            for id in folding.dropped { bytes -= states.removeValue(forKey: id)?.estimatedBytes ?? 0 }
            for (id, folded) in folding.kept {
                let earlier = states[id]
                guard earlier != nil || bytes + folded.estimatedBytes <= capacity else { continue }
                bytes += folded.estimatedBytes - (earlier?.estimatedBytes ?? 0)
                states[id] = folded
            }
        }
    }

    /// A round's folds: the rows to write, and the states to keep or drop once written.
    struct Folding: Sendable {
        var chunks: [Chunk] = []
        var kept: [UUID: Folded] = [:]
        var dropped: [UUID] = []
    }

    /// The changed streams' rows, worked out in memory a chunk at a time, ready to write.
    struct Chunk: Sendable {
        /// Streams folded from version 1: every row of theirs is deleted, then inserted.
        var whole = AccountBatch()
        /// Streams folded on from a kept state: their `accounts` row (every unique claim) is
        /// deleted, then their rows are upserted as a command's are.
        var onward = AccountBatch()
        /// Streams whose every row goes: those folded whole, and purged ones.
        var replaced: [UUID] = []
        var requests = OTPProjector()
        var requestIDs: [UUID] = []

        /// Purged accounts, whose code requests go too.
        var purged: [UUID] { whole.purged + onward.purged }
    }

    /// Reads the changed streams and folds them, `streamsPerRead` streams a chunk: whole, or on
    /// from a kept state (reading only the events after it). `keep`: the states folded are
    /// returned for `FoldedStates.apply`. Throws `OutOfTime` between chunks past `deadline`.
    static func fold(
        _ changes: Changes, states: FoldedStates, keep: Bool, expiry: Expiry?, deadline: ContinuousClock.Instant? = nil,
        store: EventStore, on connection: PostgresConnection
    ) async throws -> Folding {
        func inTime() throws {
            if let deadline, ContinuousClock.now >= deadline { throw ShadowTables.OutOfTime() }
        }
        var folding = Folding()
        let onward = changes.accounts.filter { states.states[$0] != nil }
        let whole = changes.accounts.filter { states.states[$0] == nil }
        for ids in chunked(onward) {
            let recorded = try await store.readStreams(
                ids, afterVersions: ids.map { states.states[$0]?.state.version ?? 0 }, on: connection)
            let decoded = try await AccountState.decodeConcurrently(recorded[...])
            // A stream with no event past its kept state (the state already had them) is current.
            let batch = fold(
                accounts: recorded, decoded: decoded, streams: grouped(recorded), from: states.states, keep: keep, leavingOut: expiry)
            folding.dropped += batch.purged
            folding.kept.merge(batch.folded) { $1 }
            folding.chunks.append(Chunk(onward: batch, replaced: batch.purged))
            try inTime()
        }
        for ids in chunked(whole) {
            let recorded = try await store.readStreams(ids, on: connection)
            let decoded = try await AccountState.decodeConcurrently(recorded[...])
            let batch = fold(accounts: recorded, decoded: decoded, streams: grouped(recorded), keep: keep, leavingOut: expiry)
            folding.kept.merge(batch.folded) { $1 }
            folding.chunks.append(Chunk(whole: batch, replaced: ids))
            try inTime()
        }
        for ids in chunked(changes.requests) {
            let recorded = try await store.readStreams(ids, on: connection)
            folding.chunks.append(
                Chunk(requests: try fold(requests: recorded, streams: grouped(recorded), leavingOut: expiry), requestIDs: ids))
            try inTime()
        }
        return folding
    }

    private static func chunked(_ ids: [UUID]) -> [[UUID]] {
        stride(from: 0, to: ids.count, by: streamsPerRead).map { Array(ids[$0..<min($0 + streamsPerRead, ids.count)]) }
    }

    /// One catch-up round while the live tables are in use: reads and folds the changes in one
    /// repeatable-read snapshot, then replaces their rows in the fresh tables.
    ///
    /// Why one snapshot: a stream not changed since its projection already shows that
    /// snapshot's state, and the changed ones are made to, so the tables hold one consistent
    /// state (a unique key is never claimed twice) after every round. Why the head of that
    /// snapshot: every event it does not see commits later, so it comes after that head.
    ///
    /// The deletes go in one transaction, then each chunk's rows in one of their own: short
    /// transactions (the feed reads below the oldest running writer), and no work between
    /// statements inside them. The rows between are a subset of that one state, so no claim
    /// collides.
    static func catchUp(
        after cursor: FeedCursor, into shadow: ShadowTables, states: inout FoldedStates, store: EventStore, expiry: Expiry?,
        status: inout Progress, on connection: PostgresConnection
    ) async throws -> Changes {
        let known = states
        let (changes, folding) = try await connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { connection in
            let changes = try await Changes.read(after: cursor, states: known, store: store, on: connection)
            return (changes, try await fold(changes, states: known, keep: true, expiry: expiry, store: store, on: connection))
        }
        try await shadow.writing(on: connection) { try await deleteRows(of: changes, chunks: folding.chunks, on: $0) }
        for chunk in folding.chunks {
            try await shadow.writing(on: connection) { try await write(chunk, into: shadow, store: store, on: $0) }
        }
        states.apply(folding)
        status.catchUpRounds += 1
        status.streamsCaughtUp += changes.streamCount
        return changes
    }

    /// The last round, inside the swap's transaction, which holds the live tables: nothing that
    /// writes them can commit, so plain reads see one state, with every commit made before.
    /// Gives up (`OutOfTime`) before the work when the changes are more than `events` allows,
    /// and between chunks once half the time to `deadline` is spent reading, or all of it
    /// writing. Keeps no states (the rebuild ends here, or rolls this round back).
    static func catchUp(
        after cursor: FeedCursor, into shadow: ShadowTables, states: FoldedStates, store: EventStore, expiry: Expiry?,
        status: inout Progress, upTo events: Int, deadline: ContinuousClock.Instant, lockedOn connection: PostgresConnection
    ) async throws {
        let changes = try await Changes.read(after: cursor, states: states, store: store, on: connection)
        guard changes.events <= events else { throw ShadowTables.OutOfTime() }
        let now = ContinuousClock.now
        let folding = try await fold(
            changes, states: states, keep: false, expiry: expiry, deadline: now + (deadline - now) / 2, store: store,
            on: connection)
        try await deleteRows(of: changes, chunks: folding.chunks, on: connection)
        for chunk in folding.chunks {
            try await write(chunk, into: shadow, store: store, on: connection)
            if ContinuousClock.now >= deadline { throw ShadowTables.OutOfTime() }
        }
        // A command's rows are queued on the connection: out now, inside the budget.
        try await connection.flush()
        status.catchUpRounds += 1
        status.streamsCaughtUp += changes.streamCount
    }

    /// Deletes the changed streams' rows from the fresh tables (first on the search path): all
    /// of those folded whole (and purged), the `accounts` row of those folded on (every unique
    /// claim is there, so no claim a stream gave up meets its new holder's insert).
    private static func deleteRows(of changes: Changes, chunks: [Chunk], on connection: PostgresConnection) async throws {
        guard changes.streamCount > 0 else { return }
        let replaced = PostgresParameter.uuidArray(chunks.flatMap(\.replaced))
        for table in [
            "accounts", "sessions", "spent_refresh_tokens", "email_links", "signup_cooldowns", "hold_lapses", "passkey_credentials",
        ] {
            connection.queue("DELETE FROM \(table) WHERE account_id = ANY($1::uuid[])", [replaced])
        }
        connection.queue("DELETE FROM stream_snapshots WHERE stream_id = ANY($1::uuid[])", [replaced])
        // By the streams written, not the states kept: the last round keeps none, and two
        // accounts that swapped handles in it met each other's old claim.
        connection.queue("DELETE FROM accounts WHERE account_id = ANY($1::uuid[])", [.uuidArray(chunks.flatMap(\.onward.projected))])
        // A purge deletes the account's code requests without an event on their streams.
        try await connection.query(
            "DELETE FROM otp_requests WHERE request_id = ANY($1::uuid[]) OR account_id = ANY($2::uuid[])",
            [.uuidArray(changes.requests), .uuidArray(chunks.flatMap(\.purged))])
    }

    private static func write(_ chunk: Chunk, into shadow: ShadowTables, store: EventStore, on connection: PostgresConnection)
        async throws
    {
        try await write(chunk.whole, store: store, on: connection)
        try await write(chunk.onward, store: store, into: .live, on: connection)
        try await chunk.requests.write(on: connection, into: .emptiedTables)
        try await carryOverClientAddresses(of: chunk.requestIDs, into: shadow, on: connection)
    }

    /// Copies the client address of code requests (`of`, or all when nil) from the live table:
    /// it is in no event (it is personal, and only the per-address limit needs it, for a day),
    /// so a rebuild that dropped it would reset that limit.
    static func carryOverClientAddresses(of requests: [UUID]?, into shadow: ShadowTables, on connection: PostgresConnection)
        async throws
    {
        if let requests, requests.isEmpty { return }
        try await connection.query(
            """
            UPDATE \(shadow.shadowTable("otp_requests")) AS fresh SET client_address = live.client_address
            FROM \(shadow.liveTable("otp_requests")) AS live
            WHERE live.request_id = fresh.request_id AND live.client_address IS NOT NULL
              AND ($1::uuid[] IS NULL OR fresh.request_id = ANY($1::uuid[]))
            """,
            [requests.map { .uuidArray($0) } ?? .null])
    }
}
