import Foundation
import LedgerAccounts
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

extension AccountProjections {
    /// The streams changed after a feed position, whole, as one snapshot saw them.
    struct Changes {
        /// The feed's head in that snapshot: where the next round starts.
        var head: FeedCursor
        var accounts: [UUID] = []
        var requests: [UUID] = []
        var accountEvents: [RecordedEvent] = []
        var requestEvents: [RecordedEvent] = []

        var streamCount: Int { accounts.count + requests.count }
    }

    /// One catch-up round while the live tables are in use: reads the changes in one
    /// repeatable-read snapshot, then projects them into the fresh tables in one transaction.
    ///
    /// Why one snapshot: a stream not changed since its projection already shows that
    /// snapshot's state, and the changed ones are made to, so the tables hold one consistent
    /// state (a unique key is never claimed twice) after every round. Why the head of that
    /// snapshot: every event it does not see commits later, so it comes after that head.
    static func catchUp(
        after cursor: FeedCursor, into shadow: ShadowTables, store: EventStore, status: inout Progress,
        on connection: PostgresConnection
    ) async throws -> FeedCursor {
        let changes = try await connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
            try await readChanges(after: cursor, store: store, on: $0)
        }
        try await shadow.writing(on: connection) { try await project(changes, into: shadow, store: store, on: $0) }
        status.catchUpRounds += 1
        status.streamsCaughtUp += changes.streamCount
        return changes.head
    }

    /// The last round, inside the swap's transaction, which holds the live tables: nothing that
    /// writes them can commit, so plain reads see one state, with every commit made before.
    static func catchUp(
        after cursor: FeedCursor, into shadow: ShadowTables, store: EventStore, status: inout Progress,
        lockedOn connection: PostgresConnection
    ) async throws -> FeedCursor {
        let changes = try await readChanges(after: cursor, store: store, on: connection)
        try await project(changes, into: shadow, store: store, on: connection)
        status.catchUpRounds += 1
        status.streamsCaughtUp += changes.streamCount
        return changes.head
    }

    private static func readChanges(after cursor: FeedCursor, store: EventStore, on connection: PostgresConnection) async throws
        -> Changes
    {
        var changes = Changes(head: try await store.headCursor(on: connection))
        let changed = try await store.streamsChanged(
            after: cursor, types: [PostgresAccountRepository.streamType, PostgresOTPRepository.streamType], on: connection)
        for (streamID, type) in changed {
            if type == PostgresAccountRepository.streamType { changes.accounts.append(streamID) } else { changes.requests.append(streamID) }
        }
        for chunk in chunks(changes.accounts) { changes.accountEvents += try await store.readStreams(chunk, on: connection) }
        for chunk in chunks(changes.requests) { changes.requestEvents += try await store.readStreams(chunk, on: connection) }
        return changes
    }

    private static func chunks(_ ids: [UUID]) -> [[UUID]] {
        stride(from: 0, to: ids.count, by: streamsPerRead).map { Array(ids[$0..<min($0 + streamsPerRead, ids.count)]) }
    }

    /// Replaces the changed streams' rows in the fresh tables (the connection's search path
    /// finds them first) with their rows from the whole stream, as the load wrote them. All
    /// deletes come before any insert, so a claim one stream gave up is free for another.
    private static func project(
        _ changes: Changes, into shadow: ShadowTables, store: EventStore, on connection: PostgresConnection
    ) async throws {
        guard changes.streamCount > 0 else { return }
        let decoded = try await AccountState.decodeConcurrently(changes.accountEvents[...])
        let accounts = fold(accounts: changes.accountEvents, decoded: decoded, streams: grouped(changes.accountEvents))
        let requests = try fold(requests: changes.requestEvents, streams: grouped(changes.requestEvents))
        let accountIDs = PostgresParameter.uuidArray(changes.accounts)
        for table in ["accounts", "sessions", "spent_refresh_tokens", "email_links", "signup_cooldowns"] {
            connection.queue("DELETE FROM \(table) WHERE account_id = ANY($1::uuid[])", [accountIDs])
        }
        connection.queue("DELETE FROM stream_snapshots WHERE stream_id = ANY($1::uuid[])", [accountIDs])
        // A purge deletes the account's code requests without an event on their streams.
        try await connection.query(
            "DELETE FROM otp_requests WHERE request_id = ANY($1::uuid[]) OR account_id = ANY($2::uuid[])",
            [.uuidArray(changes.requests), .uuidArray(accounts.purged)])
        try await write(accounts, store: store, on: connection)
        try await requests.write(on: connection, into: .emptiedTables)
        try await carryOverClientAddresses(of: changes.requests, into: shadow, on: connection)
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
