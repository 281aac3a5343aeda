import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres
import Logging

/// The append-only store of identity events on PostgreSQL (docs/architecture.md "Event store rules").
///
/// Appends are one `ledger_append` call: one round trip, one commit when run on its own.
/// Callers that update projections in the same transaction use the `on:` variants inside
/// `PostgresClient.transaction`.
public final class EventStore: Sendable {
    /// Where this store reads and writes; a store reading through a `StandbyRoute`, where
    /// the route sends a read made now.
    public var client: PostgresClient { route?.client ?? home }
    private let home: PostgresClient
    /// Set on a store made by `reading(through:)`.
    private let route: StandbyRoute?
    public let keyring: SubjectKeyring
    public let clock: any LedgerClock
    let wakeups: FeedWakeups
    let batcher: AppendBatcher
    /// The group commit's and the wake-ups' background jobs, run by `run()`.
    let jobs: StoreJobs
    let logger: Logger

    /// - Parameters:
    ///   - appendTransactions: the most group-commit transactions in flight; past the first,
    ///     one starts only when the append queue has not moved for `appendStallThreshold`.
    public init(
        client: PostgresClient, keyring: SubjectKeyring, clock: any LedgerClock = SystemClock(),
        appendTransactions: Int = 2, appendStallThreshold: Duration = .milliseconds(5),
        logger: Logger = Logger(label: "ledger.event-store")
    ) {
        self.home = client
        self.route = nil
        self.keyring = keyring
        self.clock = clock
        self.logger = logger
        let jobs = StoreJobs()
        self.jobs = jobs
        let wakeups = FeedWakeups(client: client, jobs: jobs)
        self.wakeups = wakeups
        self.batcher = AppendBatcher(
            client: client, clock: clock, wakeups: wakeups, jobs: jobs, maximumFlushers: appendTransactions,
            stallThreshold: appendStallThreshold)
    }

    /// The same store read through `readClient` (a hot standby, `LEDGER_READ_DATABASE_URL`): the
    /// feed, streams and audit reads, with this store's keyring and wake-ups (a commit here wakes
    /// its followers; a standby that lags shows them what it has). Never write through it.
    public func reading(from readClient: PostgresClient) -> EventStore {
        EventStore(client: readClient, route: nil, keyring: keyring, clock: clock, wakeups: wakeups, logger: logger)
    }

    /// The same store read through `route`: the standby while the route grants it (within
    /// `LEDGER_READ_MAX_LAG_SECONDS`), the primary otherwise, chosen again for every read
    /// (docs/architecture.md "Event store rules", "Readers on a standby"). Never write through it.
    public func reading(through route: StandbyRoute) -> EventStore {
        EventStore(client: route.primary, route: route, keyring: keyring, clock: clock, wakeups: wakeups, logger: logger)
    }

    private init(
        client: PostgresClient, route: StandbyRoute?, keyring: SubjectKeyring, clock: any LedgerClock, wakeups: FeedWakeups,
        logger: Logger
    ) {
        self.home = client
        self.route = route
        self.keyring = keyring
        self.clock = clock
        self.logger = logger
        self.wakeups = wakeups
        // A reading store never runs: its appends (there should be none) commit alone.
        let jobs = StoreJobs()
        self.jobs = jobs
        self.batcher = AppendBatcher(client: client, clock: clock, wakeups: wakeups, jobs: jobs, maximumFlushers: 1)
    }

    /// Appends `events` to a stream atomically.
    ///
    /// Concurrent calls are group-committed (at most `appendTransactions` in flight): appends waiting at the same moment share one
    /// transaction and one round trip (`ledger_append_batch`), and one append's conflict never
    /// fails another.
    ///
    /// - Parameters:
    ///   - subjectID: whose data key seals the payloads (nil stores them unencrypted, for
    ///     streams without personal data).
    ///   - expected: the optimistic-concurrency check; a mismatch throws `wrongExpectedVersion`.
    /// - Returns: the original result when the same event ids were appended before.
    @discardableResult
    public func append(
        to streamID: UUID, streamType: String, subjectID: UUID?, expected: ExpectedVersion, events: [NewEvent]
    ) async throws -> AppendResult {
        try PreparedAppend.validate(events)
        var key: DataKey?
        if let subjectID {
            if let cached = keyring.cachedKey(for: subjectID) {
                key = cached
            } else {
                key = try await client.withConnection { try await keyring.dataKey(for: subjectID, on: $0) }
            }
        }
        let prepared = try PreparedAppend(
            streamID: streamID, streamType: streamType, subjectID: subjectID, expected: expected, events: events, key: key)
        return try await batcher.submit(prepared)
    }

    /// Appends inside the caller's transaction (or autocommit when none is open). The caller
    /// must call `committed()` after its commit so followers wake promptly. `recordedAt`
    /// defaults to the store's clock; callers that fold the events themselves pass the time
    /// they used, so a later replay sees exactly the same times.
    @discardableResult
    public func append(
        to streamID: UUID, streamType: String, subjectID: UUID?, expected: ExpectedVersion, events: [NewEvent],
        recordedAt: Date? = nil, on connection: PostgresConnection
    ) async throws -> AppendResult {
        let prepared = try await prepare(streamID, streamType, subjectID, expected, events, on: connection)
        do {
            let rows = try await connection.query(
                PreparedAppend.singleSQL, prepared.singleParameters(recordedAt: recordedAt ?? clock.now()))
            return try prepared.result(rows[0])
        } catch let error as PostgresError {
            throw Self.translate(error)
        }
    }

    /// `append(…, on:)` for a caller that does not need the result: the append is queued on
    /// the connection and goes out with the transaction's next statement (often its `COMMIT`),
    /// saving a round trip. Its errors are the same, thrown by that later statement.
    public func queueAppend(
        to streamID: UUID, streamType: String, subjectID: UUID?, expected: ExpectedVersion, events: [NewEvent],
        recordedAt: Date? = nil, on connection: PostgresConnection
    ) async throws {
        let prepared = try await prepare(streamID, streamType, subjectID, expected, events, on: connection)
        connection.queue(
            PreparedAppend.singleSQL, prepared.singleParameters(recordedAt: recordedAt ?? clock.now()),
            translate: { Self.translate($0) })
    }

    /// Checks and seals an append made inside the caller's transaction.
    private func prepare(
        _ streamID: UUID, _ streamType: String, _ subjectID: UUID?, _ expected: ExpectedVersion, _ events: [NewEvent],
        on connection: PostgresConnection
    ) async throws -> PreparedAppend {
        try PreparedAppend.validate(events)
        let key = try await subjectID.asyncMap { try await keyring.dataKey(for: $0, on: connection) }
        return try PreparedAppend(
            streamID: streamID, streamType: streamType, subjectID: subjectID, expected: expected, events: events, key: key)
    }

    /// Takes the stream's lock for the rest of the caller's transaction, as `append` does. The
    /// lock is queued on the connection and goes out with the transaction's next statement: a
    /// read sent with it runs after the lock is granted and sees every commit before that.
    public func lockStream(_ streamID: UUID, on connection: PostgresConnection) {
        connection.queue("SELECT ledger_lock_stream($1)", [.uuid(streamID)])
    }

    /// Tells followers in this process (at once) and elsewhere (by NOTIFY) that events were
    /// committed. A hint only: readers also poll.
    public func committed() {
        wakeups.committed()
    }

    /// A counter that moves on every commit this process makes or hears of: read it, do the
    /// work, then `waitForCommit(after:)` to sleep until there may be more.
    public var commitGeneration: UInt64 { wakeups.generation }

    /// Waits until a commit after `generation`, the timeout, or cancellation.
    public func waitForCommit(after generation: UInt64, timeout: Duration) async {
        await wakeups.wait(after: generation, timeout: timeout)
    }

    static func translate(_ error: PostgresError) -> any Error {
        // A statement queued before the append failed: its error is not the append's.
        guard !error.raisedByQueuedStatement else { return error }
        return translate(sqlState: error.sqlState, message: error.message, detail: error.detail) ?? error
    }

    /// The store's error for one of its SQLSTATEs, nil for any other.
    static func translate(sqlState: String?, message: String, detail: String?) -> EventStoreError? {
        switch sqlState {
        case "LA001":
            return EventStoreError(
                .wrongExpectedVersion, "the stream is at another version than expected",
                actualVersion: detail.flatMap { Int64($0) })
        case "LA003":
            return EventStoreError(.idempotencyConflict, "an event id was already used for other content")
        case "LA004":
            return EventStoreError(.subjectKeyDestroyed, "the subject's data key is missing or destroyed")
        case "LA002":
            return EventStoreError(.invalidEvent, message)
        case "23514":
            return EventStoreError(.invalidEvent, "an event breaks a store rule: \(message)")
        case "23505":
            return EventStoreError(.idempotencyConflict, "an event id was appended concurrently")
        default:
            return nil
        }
    }
}
