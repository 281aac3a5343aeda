import Foundation
import LedgerAccounts
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Throws the account projections away and rebuilds them from the account streams, giving
/// exactly the rows the incremental path wrote (docs/architecture.md "Event store rules").
public enum AccountProjections {
    /// The tables rebuilt; operational tables (outbox, throttles, API keys) are not projections.
    static let tables = [
        "accounts", "sessions", "spent_refresh_tokens", "email_links", "otp_requests", "signup_cooldowns", "stream_snapshots",
    ]

    /// How far a rebuild is: streams replayed of all, and events read so far.
    public struct Progress: Sendable {
        public var streamsDone = 0
        public var streamsTotal = 0
        public var events = 0
        public init() {}
    }

    /// Streams read per round trip (a rebuild's batch).
    public static let streamsPerRead = 500
    /// Batches read and decoded ahead of the fold, each on its own pooled connection.
    static let readAheadDepth = 2

    /// Rebuilds every account and OTP request in one transaction; returns how many accounts
    /// were replayed. `progress` is told after every batch of streams.
    ///
    /// Each stream is folded whole and projected once (`AccountProjector` writes from the
    /// final state and each event's own time), so the rows are those the incremental path wrote.
    /// Snapshots are rewritten too: one every `AccountSnapshots.interval` versions.
    @discardableResult
    public static func rebuild(
        store: EventStore, streamsPerRead: Int = streamsPerRead, progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws -> Int {
        try await store.client.transaction { connection in
            try await connection.query("TRUNCATE " + tables.joined(separator: ", "))
            // Its inserts are plain but for these two (`ON CONFLICT` on their primary keys).
            let indexes = try await DeferredIndexes.drop(
                from: tables, keepingPrimaryKeysOf: ["signup_cooldowns", "stream_snapshots"], on: connection)
            let accounts = try await streamIDs(ofType: PostgresAccountRepository.streamType, on: connection)
            let requests = try await streamIDs(ofType: PostgresOTPRepository.streamType, on: connection)
            var status = Progress()
            status.streamsTotal = accounts.count + requests.count
            // Batch N is written while batch N+1 is folded: one write at a time on the
            // transaction's connection, and none left running when this returns or throws.
            var writing: Task<Void, any Error>?
            do {
                try await forEachBatch(
                    accounts, batchSize: streamsPerRead, store: store, status: &status, progress: progress, on: connection,
                    prepare: { try await AccountState.decodeConcurrently($0[...]) }
                ) { recorded, decoded, streams in
                    var projector = AccountProjector()
                    var snapshots: [(AccountState, Date)] = []
                    for (accountID, range) in streams {
                        var state = AccountState(accountID: accountID)
                        var events: [(AccountEvent, Date)] = []
                        events.reserveCapacity(range.count)
                        var lastRecordedAt = Date.distantPast
                        for index in range {
                            state.apply(decoded[index], recordedAt: recorded[index].recordedAt)
                            lastRecordedAt = max(lastRecordedAt, recorded[index].recordedAt)
                            if let event = decoded[index] { events.append((event, recorded[index].recordedAt)) }
                            if state.version % AccountSnapshots.interval == 0 { snapshots.append((state, lastRecordedAt)) }
                        }
                        projector.add(state, events: events)
                    }
                    try await writing?.value
                    writing = Task { [projector, snapshots] in
                        try await projector.write(on: connection, into: .emptiedTables)
                        for (state, lastRecordedAt) in snapshots where state.purgedAt == nil {
                            try await AccountSnapshots.save(state, lastRecordedAt: lastRecordedAt, store: store, on: connection)
                        }
                    }
                }
                try await writing?.value
            } catch {
                _ = try? await writing?.value
                throw error
            }
            try await forEachBatch(
                requests, batchSize: streamsPerRead, store: store, status: &status, progress: progress, on: connection,
                prepare: { _ in }
            ) { recorded, _, streams in
                var projector = OTPProjector()
                for (requestID, range) in streams {
                    var challenge = OTPChallenge(requestID: requestID)
                    var events: [(OTPEvent, Date)] = []
                    for event in recorded[range] {
                        if let applied = try challenge.apply(event) { events.append((applied, event.recordedAt)) }
                    }
                    projector.add(requestID, events: events, clientAddress: nil)
                }
                try await projector.write(on: connection, into: .emptiedTables)
            }
            try await indexes.restore(on: connection)
            return accounts.count
        }
    }

    private static func streamIDs(ofType type: String, on connection: PostgresConnection) async throws -> [UUID] {
        let rows = try await connection.query("SELECT stream_id FROM streams WHERE stream_type = $1 ORDER BY stream_id", [.text(type)])
        return try rows.rows.compactMap { try $0.uuid(0) }
    }

    /// Reads `streams` a batch at a time, `prepare`s each batch (decoding) and hands it to
    /// `body` with where each stream's events are among them (in version order).
    ///
    /// Reading and preparing run `readAheadDepth` batches ahead on other pooled connections, so
    /// this process decodes batches N+1 and N+2 while PostgreSQL writes batch N. Those reads are outside the
    /// rebuild's transaction, which changes nothing they can see: the transaction is READ
    /// COMMITTED, so a read inside it would also see every commit as it happens (and appends
    /// that write projections wait for the rebuild's `TRUNCATE` locks anyway). With a pool of
    /// one connection, everything runs on `connection` in turn.
    private static func forEachBatch<Prepared: Sendable>(
        _ streams: [UUID], batchSize: Int, store: EventStore, status: inout Progress, progress: (@Sendable (Progress) -> Void)?,
        on connection: PostgresConnection, prepare: @escaping @Sendable ([RecordedEvent]) async throws -> Prepared,
        _ body: ([RecordedEvent], Prepared, [(UUID, Range<Int>)]) async throws -> Void
    ) async throws {
        let batches = stride(from: 0, to: streams.count, by: max(batchSize, 1)).map {
            Array(streams[$0..<min($0 + max(batchSize, 1), streams.count)])
        }
        let readAhead = store.client.configuration.maximumConnections > 1
        func load(_ batch: [UUID]) -> Task<([RecordedEvent], Prepared), any Error> {
            Task {
                let events = try await store.client.withConnection { try await store.readStreams(batch, on: $0) }
                return (events, try await prepare(events))
            }
        }
        // Two batches in flight smooth out the moments when PostgreSQL or this process lags.
        var ahead = readAhead ? batches.prefix(readAheadDepth).map(load) : []
        defer { for loading in ahead { loading.cancel() } }
        for (index, batch) in batches.enumerated() {
            let events: [RecordedEvent]
            let prepared: Prepared
            if !ahead.isEmpty {
                (events, prepared) = try await ahead.removeFirst().value
                if index + readAheadDepth < batches.count { ahead.append(load(batches[index + readAheadDepth])) }
            } else {
                events = try await store.readStreams(batch, on: connection)
                prepared = try await prepare(events)
            }
            var grouped: [(UUID, Range<Int>)] = []
            var start = events.startIndex
            while start < events.endIndex {
                let streamID = events[start].streamID
                var end = start + 1
                while end < events.endIndex && events[end].streamID == streamID { end += 1 }
                grouped.append((streamID, start..<end))
                start = end
            }
            try await body(events, prepared, grouped)
            status.events += events.count
            status.streamsDone += batch.count
            progress?(status)
        }
    }
}
