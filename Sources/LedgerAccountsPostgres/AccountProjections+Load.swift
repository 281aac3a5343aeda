import Foundation
import LedgerAccounts
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

extension AccountProjections {
    /// Batches read and decoded ahead of the fold, each on its own pooled connection.
    static let readAheadDepth = 2

    /// Account streams folded: their rows, the snapshots due, which were purged, and (when
    /// asked) the states the rows show.
    struct AccountBatch: Sendable {
        var projector = AccountProjector()
        var snapshots: [(AccountState, Date)] = []
        var purged: [UUID] = []
        /// The streams whose rows the batch writes (every one folded but the purged).
        var projected: [UUID] = []
        var folded: [UUID: Folded] = [:]
    }

    /// A stream's state and the latest `recorded_at` folded into it.
    struct Folded: Sendable {
        var state: AccountState
        var lastRecordedAt = Date.distantPast

        /// About how much memory the state takes: sessions are most of a long account's.
        var estimatedBytes: Int { 1_024 + 600 * state.sessions.count + 200 * state.pendingLinks.count }
    }

    /// Folds each stream of `streams` (ranges of `recorded`, in version order) on from `from`
    /// (its state at the version before its first event here; version 1 when absent), and works
    /// out the rows those events change: all of a stream's rows when folded from version 1.
    /// A purged stream gets none (its history is unreadable to a rebuild). `keep`: the states
    /// are returned in `folded`. Email links past `expiry` are left out.
    static func fold(
        accounts recorded: [RecordedEvent], decoded: [AccountEvent?], streams: [(UUID, Range<Int>)], from: [UUID: Folded] = [:],
        keep: Bool = false, leavingOut expiry: Expiry? = nil
    ) -> AccountBatch {
        var batch = AccountBatch()
        for (accountID, range) in streams {
            let previous = from[accountID]
            var folded = previous ?? Folded(state: AccountState(accountID: accountID))
            var events: [(AccountEvent, Date)] = []
            events.reserveCapacity(range.count)
            for index in range {
                folded.state.apply(decoded[index], recordedAt: recorded[index].recordedAt)
                folded.lastRecordedAt = max(folded.lastRecordedAt, recorded[index].recordedAt)
                if let event = decoded[index] { events.append((event, recorded[index].recordedAt)) }
                if folded.state.version % AccountSnapshots.interval == 0 { batch.snapshots.append((folded.state, folded.lastRecordedAt)) }
            }
            if folded.state.purgedAt != nil {
                batch.purged.append(accountID)
                continue
            }
            batch.projector.add(folded.state, events: events, from: previous?.state)
            batch.projected.append(accountID)
            if keep { batch.folded[accountID] = folded }
        }
        if let expiry { batch.projector.leaveOut(linksExpiredBefore: expiry.emailLinksExpiredBefore) }
        return batch
    }

    /// Stores a batch's rows and snapshots (a purged account has none): into emptied rows, or
    /// (`.live`) over the rows of the states the batch was folded on from.
    static func write(
        _ batch: AccountBatch, store: EventStore, into target: ProjectionTarget = .emptiedTables, on connection: PostgresConnection
    ) async throws {
        try await batch.projector.write(on: connection, into: target)
        // Not of a stream purged later in the batch either (its key is gone, and with it the right to a snapshot).
        let purged = Set(batch.purged)
        for (state, lastRecordedAt) in batch.snapshots where state.purgedAt == nil && !purged.contains(state.accountID) {
            try await AccountSnapshots.save(state, lastRecordedAt: lastRecordedAt, store: store, on: connection)
        }
    }

    /// Folds each code request of `streams` from its first event; those past `expiry` are left out.
    static func fold(requests recorded: [RecordedEvent], streams: [(UUID, Range<Int>)], leavingOut expiry: Expiry? = nil) throws
        -> OTPProjector
    {
        var projector = OTPProjector()
        for (requestID, range) in streams {
            var challenge = OTPChallenge(requestID: requestID)
            var events: [(OTPEvent, Date)] = []
            for event in recorded[range] {
                if let applied = try challenge.apply(event) { events.append((applied, event.recordedAt)) }
            }
            projector.add(requestID, events: events, clientAddress: nil)
        }
        if let expiry { projector.leaveOut(madeBefore: expiry.otpRequestsMadeBefore) }
        return projector
    }

    /// Loads every account and code request into the fresh tables, one batch of streams per
    /// transaction (short, so the feed, which reads below the oldest running writer, is
    /// never held back for long); returns how many accounts there were.
    static func load(
        into shadow: ShadowTables, store: EventStore, batchSize: Int, expiry: Expiry?, status: inout Progress,
        progress: (@Sendable (Progress) -> Void)?, on connection: PostgresConnection
    ) async throws -> Int {
        let accounts = try await streamIDs(ofType: PostgresAccountRepository.streamType, on: connection)
        let requests = try await streamIDs(ofType: PostgresOTPRepository.streamType, on: connection)
        status.streamsTotal = accounts.count + requests.count
        // Batch N is written while batch N+1 is folded (its reads on other pooled connections):
        // one write at a time on this connection, and none left running when this returns or throws.
        let writeBehind = store.client.configuration.maximumConnections > 1
        var writing: Task<Void, any Error>?
        do {
            try await forEachBatch(
                accounts, batchSize: batchSize, store: store, status: &status, progress: progress, on: connection,
                prepare: { try await AccountState.decodeConcurrently($0[...]) },
                project: { recorded, decoded, streams in
                    let batch = fold(accounts: recorded, decoded: decoded, streams: streams, leavingOut: expiry)
                    try await writing?.value
                    writing = nil
                    if writeBehind {
                        writing = Task { try await shadow.writing(on: connection) { try await write(batch, store: store, on: $0) } }
                    } else {
                        try await shadow.writing(on: connection) { try await write(batch, store: store, on: $0) }
                    }
                })
            try await writing?.value
        } catch {
            _ = try? await writing?.value
            throw error
        }
        try await forEachBatch(
            requests, batchSize: batchSize, store: store, status: &status, progress: progress, on: connection,
            prepare: { _ in },
            project: { recorded, _, streams in
                let projector = try fold(requests: recorded, streams: streams, leavingOut: expiry)
                try await shadow.writing(on: connection) { try await projector.write(on: $0, into: .emptiedTables) }
            })
        return accounts.count
    }

    private static func streamIDs(ofType type: String, on connection: PostgresConnection) async throws -> [UUID] {
        // The catalog, not the `streams` view: listing needs no head (one probe a stream).
        let rows = try await connection.query(
            "SELECT stream_id FROM stream_catalog WHERE stream_type = $1 ORDER BY stream_id", [.text(type)])
        return try rows.rows.compactMap { try $0.uuid(0) }
    }

    /// Where each stream's events are among `events` (grouped by stream, in version order).
    static func grouped(_ events: [RecordedEvent]) -> [(UUID, Range<Int>)] {
        var grouped: [(UUID, Range<Int>)] = []
        var start = events.startIndex
        while start < events.endIndex {
            let streamID = events[start].streamID
            var end = start + 1
            while end < events.endIndex && events[end].streamID == streamID { end += 1 }
            grouped.append((streamID, start..<end))
            start = end
        }
        return grouped
    }

    /// Reads `streams` a batch at a time, `prepare`s each batch (decoding) and hands it to
    /// `body` with where each stream's events are among them (in version order).
    ///
    /// Reading and preparing run `readAheadDepth` batches ahead on other pooled connections, so
    /// this process decodes batches N+1 and N+2 while PostgreSQL writes batch N. Each read sees
    /// the commits made by then; a stream that changes after its read is projected again by
    /// the catch-up. With a pool of one connection, everything runs on `connection` in turn.
    private static func forEachBatch<Prepared: Sendable>(
        _ streams: [UUID], batchSize: Int, store: EventStore, status: inout Progress, progress: (@Sendable (Progress) -> Void)?,
        on connection: PostgresConnection, prepare: @escaping @Sendable ([RecordedEvent]) async throws -> Prepared,
        project body: ([RecordedEvent], Prepared, [(UUID, Range<Int>)]) async throws -> Void
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
            try await body(events, prepared, grouped(events))
            status.events += events.count
            status.streamsDone += batch.count
            progress?(status)
        }
    }
}
