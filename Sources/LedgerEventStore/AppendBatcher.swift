import Foundation
import LedgerCore
import LedgerPostgres

/// Group commit for standalone appends.
///
/// Appends arriving while a transaction is in flight queue up, and the flusher takes all of
/// them (up to `maximumBatch`) into its next `ledger_append_batch` call. An idle store adds
/// no latency: a lone append is sent at once. Flushers and watches are jobs of the store's
/// `run()` (`StoreJobs`); while the store does not run, each append commits alone on its
/// caller's task.
///
/// One flusher at a time serves the queue: a commit costs a WAL flush, and two transactions
/// in flight split the waiting appends into two smaller batches whose flushes queue behind
/// each other (measured in BENCHMARKS.md, single-event appends). A second flusher, up to
/// `maximumFlushers`, starts only when the queue has made no progress for `stallThreshold`
/// (the batch in flight waits on a stream lock, say), so that appends to other streams do
/// not wait behind it: noticed by the next append, or by a watch task that runs while
/// appends are queued.
///
/// A flusher runs on a blocking thread with its pooled connection and waits on the socket in
/// place, as pgbench's loop does: awaiting every result through the readiness thread and
/// resuming a task for it cost a tenth to a quarter more client CPU per append at 1 writer
/// (BENCHMARKS.md and its history). When the queue empties, the flusher waits `linger` for the next
/// append before it gives its connection back, so that a writer's next append, made as soon
/// as it is answered, does not pay for a new flusher.
///
/// A batch whose connection dies under it (or while the flusher lingered) is sent again by a
/// flusher on another connection: whether it committed is unknown, but an append is idempotent
/// by its event ids (and sealed once), so one that did is answered with its first result.
///
/// The bookkeeping and its decisions are `State`, a pure state machine; this class holds it
/// under its lock and does what it says. Its sendability stays unchecked: the flushers wait
/// for appends on the lock's condition from blocking threads, which a `Mutex` has not.
final class AppendBatcher: @unchecked Sendable {
    /// An append waiting for a flusher; its continuation gets nil when no flusher can start
    /// (the store does not run), and the append then commits alone.
    private typealias Waiter = (append: PreparedAppend, continuation: CheckedContinuation<AppendResult?, any Error>)
    private typealias Queued = State<Waiter>.Queued
    /// Times a batch is sent again after its connection died: once, and once more should the
    /// next connection be a pooled one killed with the first (a server restart), so that a
    /// database that keeps dropping connections fails the appends rather than loop.
    static let maximumResends = 2

    private let client: PostgresClient
    private let clock: any LedgerClock
    let wakeups: FeedWakeups
    private let jobs: StoreJobs
    /// Guards `state`; a waiting flusher waits on it for appends.
    private let lock = MonotonicCondition()
    private var state: State<Waiter>
    /// How often a watch looks whether the queue still moves (`state.stallThreshold`).
    private let stallThreshold: Duration
    /// How long an idle flusher waits for the next append before it retires.
    private let linger: Duration
    /// How long a flusher waits for the writers it has just answered to queue their next appends.
    private let gather: Duration

    init(
        client: PostgresClient, clock: any LedgerClock, wakeups: FeedWakeups, jobs: StoreJobs, maximumFlushers: Int = 2,
        stallThreshold: Duration = .milliseconds(5), linger: Duration = .milliseconds(1),
        gather: Duration = .microseconds(500), maximumBatch: Int = 64
    ) {
        self.client = client
        self.stallThreshold = stallThreshold
        self.gather = gather
        self.clock = clock
        self.wakeups = wakeups
        self.jobs = jobs
        self.state = State(
            maximumFlushers: min(maximumFlushers, client.configuration.maximumConnections), maximumBatch: maximumBatch,
            stallThreshold: stallThreshold, now: .now)
        // Only a lone flusher lingers; a pool of one connection would keep everyone else
        // waiting meanwhile.
        self.linger = client.configuration.maximumConnections > 1 ? linger : .zero
    }

    func submit(_ append: PreparedAppend) async throws -> AppendResult {
        let batched: AppendResult? = try await withCheckedThrowingContinuation { continuation in
            let action: State<Waiter>.SubmitAction? = lock.withLock {
                guard jobs.accepting else { return nil }
                let action = state.submit((append, continuation), now: .now)
                if action == .wakeWaitingFlusher { lock.broadcast() }
                return action
            }
            switch action {
            case nil: continuation.resume(returning: nil)
            case .queued, .wakeWaitingFlusher: break
            case .startFlusher: startFlusher()
            case .startWatch: startWatch()
            }
        }
        if let batched { return batched }
        return try await commitAlone(append)
    }

    /// Starts the flusher the state counted as running, as a job of the store's `run()`. One
    /// that cannot start (the store stopped) is uncounted, and the queued appends go back to
    /// their callers to commit alone: a flusher still running may be stuck behind a lock whose
    /// holder waits for one of them.
    private func startFlusher() {
        guard !jobs.start(.flush) else { return }
        lock.withLock { state.flusherRefused() }
        returnQueued()
    }

    /// Starts the watch the state counted as running, as a job of the store's `run()`;
    /// uncounted when it cannot start.
    private func startWatch() {
        if !jobs.start(.watch) { lock.withLock { state.watchEnded() } }
    }

    /// Hands every queued append back to its caller to commit alone (the store stopped).
    func returnQueued() {
        let returned = lock.withLock { state.drain() }
        for waiter in returned { waiter.continuation.resume(returning: nil) }
    }

    /// How many appends wait for a flusher.
    var queuedCount: Int {
        lock.withLock { state.queued }
    }

    /// Whether nothing is queued or under way: the store may stop.
    var isIdle: Bool {
        lock.withLock { state.isIdle }
    }

    /// One append in a transaction of its own, on the caller's task: the path while the store
    /// does not run. Retried as a batch is (a transient error, a connection lost under it).
    private func commitAlone(_ append: PreparedAppend) async throws -> AppendResult {
        var (attempt, resends) = (0, 0)
        while true {
            do {
                let result = try await client.withConnection { connection in
                    try await connection.withBlockingThread { [clock] in
                        try Self.run([append], recordedAt: clock.now(), on: $0)[0].get()
                    }
                }
                wakeups.committed()
                return result
            } catch let error as PostgresError where error.isTransient && attempt < 3 {
                attempt += 1
            } catch let error as PostgresError where error.code == .connectionLost && resends < Self.maximumResends {
                resends += 1
            } catch let error as PostgresError {
                throw EventStore.translate(error)
            }
        }
    }

    /// While appends wait behind a busy flusher, checks every `stallThreshold` whether the
    /// queue still moves, and starts another flusher when it does not. Without it, appends
    /// queued behind a batch that waits on a lock would wait as long as the lock, even when
    /// no later append comes along to notice the stall, and the lock's holder might be
    /// waiting for them.
    func watch() async {
        while true {
            // Cancelled with the store's run: nothing is left queued (`returnQueued`).
            guard (try? await Task.sleep(for: stallThreshold)) != nil else { return lock.withLock { state.watchEnded() } }
            switch lock.withLock({ state.watchTick(now: .now) }) {
            case .sleepAgain: continue
            case .stop: return
            case .startFlusher: return startFlusher()
            }
        }
    }

    /// Serves the queue on one connection, from a blocking thread, until it has stayed empty
    /// for `linger`.
    func flush() async {
        do {
            try await client.withConnection { connection in
                try await connection.withBlockingThread { connection in
                    var batch: [Queued] = []
                    while let next = self.takeBatch(after: batch.count) {
                        batch = next
                        let requeued = self.execute(batch, on: connection)
                        // A broken connection would fail every later batch: hand the queue to
                        // a flusher with a fresh one (the pool drops this one, or probes it).
                        guard !requeued && connection.isUsable else { return self.retire() }
                    }
                }
            }
        } catch {
            // The connection could not be had or broke: fail what is queued now rather than
            // leave it waiting, and let the next append start a fresh flusher.
            let stranded = lock.withLock { state.flusherFailed() }
            let failure = (error as? PostgresError).map(EventStore.translate) ?? error
            for waiter in stranded { waiter.continuation.resume(throwing: failure) }
        }
    }

    /// Retires this flusher early, starting another when appends wait and no flusher is left,
    /// or a watch when the one left may be stuck on a lock.
    private func retire() {
        switch lock.withLock({ state.retire() }) {
        case .retired: break
        case .startFlusher: startFlusher()
        case .startWatch: startWatch()
        }
    }

    /// The next batch, nil (and this flusher retires) when none came within `linger`. Called
    /// on the flusher's blocking thread, after a batch of `previous` appends.
    ///
    /// The writers just answered come back with their next appends at once, each on its own
    /// task: the flusher waits up to `gather` for as many as it answered, or a thread that took
    /// only what had queued by then would alternate small and large batches, a WAL flush for
    /// each. (The flusher task this thread replaced yielded once for the same reason.) Only a
    /// lone flusher waits: a second one, started by a stall, retires when the queue is empty,
    /// so that one transaction is in flight again. (`State.prepareBatch` decides.)
    private func takeBatch(after previous: Int) -> [Queued]? {
        lock.withLock {
            let preparation = state.prepareBatch(after: previous)
            if let count = preparation.gather { state.gathered(waitForPending(count, for: gather)) }
            if state.lingers(preparation) { _ = waitForPending(1, for: linger) }
            switch state.takeBatch(now: .now) {
            case .retire: return nil
            case .send(let batch, let startWatch):
                if startWatch && !jobs.start(.watch) { state.watchEnded() }
                return batch
            }
        }
    }

    /// Waits until `count` appends are queued or `duration` has passed; whether they were.
    /// Called under the lock.
    private func waitForPending(_ count: Int, for duration: Duration) -> Bool {
        guard duration > .zero else { return state.queued >= count }
        let deadline = ContinuousClock.now + duration
        state.flusherWaits(for: count)
        while state.queued < count && lock.wait(until: deadline) {}
        state.flusherWaited()
        return state.queued >= count
    }

    /// Runs a batch and answers its appends; true when the connection died under it and its
    /// appends went back to the front of the queue (this flusher must then retire).
    private func execute(_ batch: [Queued], on connection: PostgresConnection) -> Bool {
        var attempt = 0
        while true {
            do {
                let results = try Self.run(batch.map(\.waiter.append), recordedAt: clock.now(), on: connection)
                lock.withLock { state.committed(now: .now) }
                wakeups.committed()
                for (queued, result) in zip(batch, results) { queued.waiter.continuation.resume(with: result.map { $0 }) }
                return false
            } catch let error as PostgresError where error.isTransient && attempt < 3 {
                attempt += 1
            } catch let error as PostgresError where error.code == .connectionLost {
                // To the front of the queue (ahead of every later append), for another flusher;
                // the appends sent `maximumResends` times already fail.
                let givenUp = lock.withLock { state.requeue(batch) }
                let translated = EventStore.translate(error)
                for waiter in givenUp { waiter.continuation.resume(throwing: translated) }
                return true
            } catch let error as PostgresError {
                let translated = EventStore.translate(error)
                for queued in batch { queued.waiter.continuation.resume(throwing: translated) }
                return false
            } catch {
                for queued in batch { queued.waiter.continuation.resume(throwing: error) }
                return false
            }
        }
    }

    /// One round trip, one transaction; per-append outcomes. (Two round trips when the
    /// batch meets an event id stored before.) Blocks: only on a `withBlockingThread` thread.
    static func run(
        _ appends: [PreparedAppend], recordedAt: Date, on connection: PostgresConnection
    ) throws -> [Result<AppendResult, any Error>] {
        if appends.count == 1 {
            let append = appends[0]
            let rows = try connection.queryBlocking(PreparedAppend.singleSQL, append.singleParameters(recordedAt: recordedAt))
            return [.success(try append.result(rows[0]))]
        }
        let parameters = PreparedAppend.batchParameters(appends, recordedAt: recordedAt)
        let rows: PostgresResult
        do {
            rows = try connection.queryBlocking(PreparedAppend.batchSQL, parameters)
        } catch let error as PostgresError where error.code == .uniqueViolation {
            // An event id of the batch is stored already (a retried append, or an id reused):
            // the set-based call rolled back, and the per-append one sorts out which is which.
            rows = try connection.queryBlocking(PreparedAppend.eachSQL, parameters)
        }
        var outcomes: [Result<AppendResult, any Error>] = []
        for (index, append) in appends.enumerated() {
            let row = rows[index]
            if let state = row.string(6) {
                let error = EventStore.translate(sqlState: state, message: "append failed (\(state))", detail: row.string(7))
                outcomes.append(.failure(error ?? PostgresError(.server, sqlState: state, message: "append failed")))
            } else {
                outcomes.append(.success(try append.result(row, offset: 1)))
            }
        }
        return outcomes
    }
}
