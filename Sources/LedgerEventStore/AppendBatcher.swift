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
final class AppendBatcher: @unchecked Sendable {
    /// An append waiting for a flusher; its continuation gets nil when no flusher can start
    /// (the store does not run), and the append then commits alone.
    private typealias Waiter = (
        append: PreparedAppend, continuation: CheckedContinuation<AppendResult?, any Error>, resends: Int
    )
    /// Times a batch is sent again after its connection died: once, and once more should the
    /// next connection be a pooled one killed with the first (a server restart), so that a
    /// database that keeps dropping connections fails the appends rather than loop.
    static let maximumResends = 2

    private let client: PostgresClient
    private let clock: any LedgerClock
    let wakeups: FeedWakeups
    private let jobs: StoreJobs
    private let maximumFlushers: Int
    private let maximumBatch: Int
    /// Guards the queue and the counters; a waiting flusher waits on it for appends.
    private let lock = MonotonicCondition()
    private var pending: [Waiter] = []
    private var flushers = 0
    /// When a batch last started or finished.
    private var lastProgress = ContinuousClock.now
    private let stallThreshold: Duration
    /// How long an idle flusher waits for the next append before it retires.
    private let linger: Duration
    /// How long a flusher waits for the writers it has just answered to queue their next appends.
    private let gather: Duration
    /// Off after a gather that timed out short (the writers do not come straight back, as
    /// requests over a network do not); on again once they have.
    private var gathers = true
    /// Flushers waiting for appends (`gather`, `linger`), and the fewest queued appends one of
    /// them waits for.
    private var waitingFlushers = 0
    private var wakeAtPending = 1
    /// Whether a `watch()` task is running.
    private var watching = false

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
        self.maximumFlushers = max(1, min(maximumFlushers, client.configuration.maximumConnections))
        // Only a lone flusher lingers; a pool of one connection would keep everyone else
        // waiting meanwhile.
        self.linger = client.configuration.maximumConnections > 1 ? linger : .zero
        self.maximumBatch = maximumBatch
    }

    func submit(_ append: PreparedAppend) async throws -> AppendResult {
        let batched: AppendResult? = try await withCheckedThrowingContinuation { continuation in
            let (startFlusher, startWatch): (Bool, Bool) = lock.withLock {
                guard jobs.accepting else {
                    continuation.resume(returning: nil)
                    return (false, false)
                }
                pending.append((append, continuation, 0))
                if waitingFlushers > 0 && pending.count >= wakeAtPending {
                    // A waiting flusher takes it now (and starts a watch if it leaves some behind).
                    lock.broadcast()
                    return (false, false)
                }
                if flushers == 0 || startsFlusherWhenStalled() {
                    flushers += 1
                    return (true, false)
                }
                return (false, claimsWatch())
            }
            start(flusher: startFlusher, watch: startWatch)
        }
        if let batched { return batched }
        return try await commitAlone(append)
    }

    /// Starts the flusher and the watch the caller counted as running, as jobs of the store's
    /// `run()`. What cannot start (the store stopped) is uncounted, and the queued appends go
    /// back to their callers to commit alone: a flusher still running may be stuck behind a lock
    /// whose holder waits for one of them.
    private func start(flusher: Bool, watch: Bool) {
        if flusher && !jobs.start(.flush) {
            lock.withLock { flushers -= 1 }
            returnQueued()
        }
        if watch && !jobs.start(.watch) { lock.withLock { watching = false } }
    }

    /// Hands every queued append back to its caller to commit alone (the store stopped).
    func returnQueued() {
        let returned: [Waiter] = lock.withLock {
            defer { pending.removeAll() }
            return pending
        }
        for waiter in returned { waiter.continuation.resume(returning: nil) }
    }

    /// How many appends wait for a flusher.
    var queuedCount: Int {
        lock.withLock { pending.count }
    }

    /// Whether nothing is queued or under way: the store may stop.
    var isIdle: Bool {
        lock.withLock { pending.isEmpty && flushers == 0 && !watching }
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

    /// Whether the queue has stalled and another flusher may start. Called under the lock.
    private func startsFlusherWhenStalled() -> Bool {
        let now = ContinuousClock.now
        guard flushers < maximumFlushers, now - lastProgress > stallThreshold else { return false }
        lastProgress = now
        return true
    }

    /// Whether the caller is to start a watch (none runs, and another flusher may start): then
    /// one is counted as running. Called under the lock.
    private func claimsWatch() -> Bool {
        guard !watching, flushers < maximumFlushers else { return false }
        watching = true
        return true
    }

    /// While appends wait behind a busy flusher, checks every `stallThreshold` whether the
    /// queue still moves, and starts another flusher when it does not. Without it, appends
    /// queued behind a batch that waits on a lock would wait as long as the lock, even when
    /// no later append comes along to notice the stall, and the lock's holder might be
    /// waiting for them.
    func watch() async {
        while true {
            // Cancelled with the store's run: nothing is left queued (`returnQueued`).
            guard (try? await Task.sleep(for: stallThreshold)) != nil else { return lock.withLock { watching = false } }
            let (startFlusher, keepWatching): (Bool, Bool) = lock.withLock {
                guard !pending.isEmpty, flushers > 0, flushers < maximumFlushers else {
                    watching = false
                    return (false, false)
                }
                guard startsFlusherWhenStalled() else { return (false, true) }
                flushers += 1
                watching = false
                return (true, false)
            }
            start(flusher: startFlusher, watch: false)
            if !keepWatching { return }
        }
    }

    /// Serves the queue on one connection, from a blocking thread, until it has stayed empty
    /// for `linger`.
    func flush() async {
        do {
            try await client.withConnection { connection in
                try await connection.withBlockingThread { connection in
                    var batch: [Waiter] = []
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
            let stranded: [Waiter] = lock.withLock {
                defer {
                    pending.removeAll()
                    flushers -= 1
                }
                return pending
            }
            let failure = (error as? PostgresError).map(EventStore.translate) ?? error
            for waiter in stranded { waiter.continuation.resume(throwing: failure) }
        }
    }

    /// Retires this flusher early, starting another when appends wait and no flusher is left,
    /// or a watch when the one left may be stuck on a lock.
    private func retire() {
        let (replace, startWatch): (Bool, Bool) = lock.withLock {
            flushers -= 1
            guard !pending.isEmpty else { return (false, false) }
            if flushers == 0 {
                flushers += 1
                return (true, false)
            }
            return (false, claimsWatch())
        }
        start(flusher: replace, watch: startWatch)
    }

    /// The next batch, nil (and this flusher retires) when none came within `linger`. Called
    /// on the flusher's blocking thread, after a batch of `previous` appends.
    ///
    /// The writers just answered come back with their next appends at once, each on its own
    /// task: the flusher waits up to `gather` for as many as it answered, or a thread that took
    /// only what had queued by then would alternate small and large batches, a WAL flush for
    /// each. (The flusher task this thread replaced yielded once for the same reason.) Only a
    /// lone flusher waits: a second one, started by a stall, retires when the queue is empty,
    /// so that one transaction is in flight again.
    private func takeBatch(after previous: Int) -> [Waiter]? {
        lock.withLock {
            let alone = flushers == 1
            if alone && previous > 1 {
                if pending.count >= previous {
                    gathers = true
                } else if gathers {
                    gathers = waitForPending(previous, for: gather)
                }
            }
            if alone && pending.isEmpty { _ = waitForPending(1, for: linger) }
            if pending.isEmpty {
                flushers -= 1
                return nil
            }
            let taken = Array(pending.prefix(maximumBatch))
            pending.removeFirst(taken.count)
            lastProgress = ContinuousClock.now
            // Left behind a full batch: if it waits on a lock, a watch notices.
            if !pending.isEmpty && claimsWatch() && !jobs.start(.watch) { watching = false }
            return taken
        }
    }

    /// Waits until `count` appends are queued or `duration` has passed; whether they were.
    /// Called under the lock.
    private func waitForPending(_ count: Int, for duration: Duration) -> Bool {
        guard duration > .zero else { return pending.count >= count }
        let deadline = ContinuousClock.now + duration
        wakeAtPending = waitingFlushers == 0 ? count : min(wakeAtPending, count)
        waitingFlushers += 1
        while pending.count < count && lock.wait(until: deadline) {}
        waitingFlushers -= 1
        return pending.count >= count
    }

    /// Runs a batch and answers its appends; true when the connection died under it and its
    /// appends went back to the front of the queue (this flusher must then retire).
    private func execute(_ batch: [Waiter], on connection: PostgresConnection) -> Bool {
        var attempt = 0
        while true {
            do {
                let results = try Self.run(batch.map(\.append), recordedAt: clock.now(), on: connection)
                lock.withLock { lastProgress = ContinuousClock.now }
                wakeups.committed()
                for (waiter, result) in zip(batch, results) { waiter.continuation.resume(with: result.map { $0 }) }
                return false
            } catch let error as PostgresError where error.isTransient && attempt < 3 {
                attempt += 1
            } catch let error as PostgresError where error.code == .connectionLost {
                // To the front of the queue (ahead of every later append), for another flusher.
                let translated = EventStore.translate(error)
                var again: [Waiter] = []
                for waiter in batch {
                    if waiter.resends < Self.maximumResends {
                        again.append((waiter.append, waiter.continuation, waiter.resends + 1))
                    } else {
                        waiter.continuation.resume(throwing: translated)
                    }
                }
                lock.withLock { pending.insert(contentsOf: again, at: 0) }
                return true
            } catch let error as PostgresError {
                let translated = EventStore.translate(error)
                for waiter in batch { waiter.continuation.resume(throwing: translated) }
                return false
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
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
