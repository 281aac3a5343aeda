import Foundation
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Throws the account projections away and rebuilds them from the account streams, giving
/// exactly the rows the incremental path wrote (DESIGN §3).
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

    /// Streams read per round trip.
    static let streamsPerRead = 500

    /// Rebuilds every account and OTP request in one transaction; returns how many accounts
    /// were replayed. `progress` is told after every batch of streams.
    ///
    /// Each stream is folded whole and projected once (`AccountProjector` writes from the
    /// final state and each event's own time), so the rows are those the incremental path wrote.
    /// Snapshots are rewritten too: one every `AccountSnapshots.interval` versions.
    @discardableResult
    public static func rebuild(store: EventStore, progress: (@Sendable (Progress) -> Void)? = nil) async throws -> Int {
        try await store.client.transaction { connection in
            try await connection.query("TRUNCATE " + tables.joined(separator: ", "))
            let accounts = try await streamIDs(ofType: PostgresAccountRepository.streamType, on: connection)
            let requests = try await streamIDs(ofType: PostgresOTPRepository.streamType, on: connection)
            var status = Progress()
            status.streamsTotal = accounts.count + requests.count
            try await forEachBatch(accounts, store: store, status: &status, progress: progress, on: connection) { recorded, streams in
                let decoded = try await AccountState.decodeConcurrently(recorded[...])
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
                try await projector.write(on: connection, earlierLinks: false)
                for (state, lastRecordedAt) in snapshots where state.purgedAt == nil {
                    try await AccountSnapshots.save(state, lastRecordedAt: lastRecordedAt, store: store, on: connection)
                }
            }
            try await forEachBatch(requests, store: store, status: &status, progress: progress, on: connection) { recorded, streams in
                var projector = OTPProjector()
                for (requestID, range) in streams {
                    var challenge = OTPChallenge(requestID: requestID)
                    var events: [(OTPEvent, Date)] = []
                    for event in recorded[range] {
                        if let applied = try challenge.apply(event) { events.append((applied, event.recordedAt)) }
                    }
                    projector.add(requestID, events: events, clientAddress: nil)
                }
                try await projector.write(on: connection, earlierRows: false)
            }
            return accounts.count
        }
    }

    private static func streamIDs(ofType type: String, on connection: PostgresConnection) async throws -> [UUID] {
        let rows = try await connection.query("SELECT stream_id FROM streams WHERE stream_type = $1 ORDER BY stream_id", [.text(type)])
        return try rows.rows.compactMap { try $0.uuid(0) }
    }

    /// Reads `streams` a batch at a time and hands each batch to `body`: the events, and where
    /// each stream's are among them (in version order).
    private static func forEachBatch(
        _ streams: [UUID], store: EventStore, status: inout Progress, progress: (@Sendable (Progress) -> Void)?,
        on connection: PostgresConnection, _ body: ([RecordedEvent], [(UUID, Range<Int>)]) async throws -> Void
    ) async throws {
        for batchStart in stride(from: 0, to: streams.count, by: streamsPerRead) {
            let batch = Array(streams[batchStart..<min(batchStart + streamsPerRead, streams.count)])
            let events = try await store.readStreams(batch, on: connection)
            var grouped: [(UUID, Range<Int>)] = []
            var start = events.startIndex
            while start < events.endIndex {
                let streamID = events[start].streamID
                var end = start + 1
                while end < events.endIndex && events[end].streamID == streamID { end += 1 }
                grouped.append((streamID, start..<end))
                start = end
            }
            try await body(events, grouped)
            status.events += events.count
            status.streamsDone += batch.count
            progress?(status)
        }
    }
}
