import Foundation
import LedgerCore
import LedgerPostgres

/// Group commit for standalone appends.
///
/// Appends arriving while a transaction is in flight queue up, and the next batch takes all
/// of them (up to `maximumBatch`) into one `ledger_append_batch` call. An idle store adds no
/// latency: a lone append is sent at once.
///
/// No task of its own runs the batches: the append that finds no batch in flight *leads*,
/// sending the batch (its own append and whatever waits) from its own task, and when it has
/// its answer it hands the lead to the first append that queued meanwhile. A lone writer's
/// append is then sent and answered on its own task, with no hand-off to another task and
/// back: each hand-off is a thread wake-up, and those were most of what a single append cost
/// outside PostgreSQL (BENCHMARKS.md, issue 27).
///
/// One batch at a time is in flight: a commit costs a WAL flush, and two transactions in
/// flight split the waiting appends into two smaller batches whose flushes queue behind each
/// other (measured in BENCHMARKS.md, issues 2 and 27). A second leader, up to
/// `maximumLeaders`, starts only when the queue has made no progress for `stallThreshold`
/// (the batch in flight waits on a stream lock, say), so that appends to other streams do
/// not wait behind it: noticed by the next append, or by a watch task that runs while
/// appends are queued.
///
/// A leader that follows a batch of several appends yields once before taking its batch, so
/// that the writers just answered can queue their next appends: without that, the next batch
/// would often be the one writer that was quickest, and the rest would wait a whole round trip.
final class AppendBatcher: @unchecked Sendable {
    /// What a queued append is told: its outcome, or that it leads the next batch.
    private enum Turn {
        case lead
        case done(Result<AppendResult, any Error>)
    }

    private typealias Waiter = (append: PreparedAppend, continuation: CheckedContinuation<Turn, Never>)

    private let client: PostgresClient
    private let clock: any LedgerClock
    private let wakeups: FeedWakeups
    private let maximumLeaders: Int
    private let maximumBatch: Int
    private let lock = NSLock()
    private var pending: [Waiter] = []
    /// Batches being taken or in flight.
    private var leaders = 0
    /// Appends in the last batch taken: more than one means other writers are about to queue again.
    private var lastBatchSize = 0
    /// When a batch last started or finished.
    private var lastProgress = ContinuousClock.now
    private let stallThreshold: Duration
    /// Whether a `watch()` task is running.
    private var watching = false

    init(
        client: PostgresClient, clock: any LedgerClock, wakeups: FeedWakeups, maximumLeaders: Int = 2,
        stallThreshold: Duration = .milliseconds(5), maximumBatch: Int = 64
    ) {
        self.client = client
        self.stallThreshold = stallThreshold
        self.clock = clock
        self.wakeups = wakeups
        self.maximumLeaders = max(1, min(maximumLeaders, client.configuration.maximumConnections))
        self.maximumBatch = maximumBatch
    }

    func submit(_ append: PreparedAppend) async throws -> AppendResult {
        let turn: Turn = await withCheckedContinuation { continuation in
            let (leads, startWatch): (Bool, Bool) = lock.withLock {
                if leaders == 0 || startsLeaderWhenStalled() {
                    leaders += 1
                    return (true, false)
                }
                pending.append((append, continuation))
                guard !watching, leaders < maximumLeaders else { return (false, false) }
                watching = true
                return (false, true)
            }
            if leads { continuation.resume(returning: .lead) }
            if startWatch { Task { await watch() } }
        }
        switch turn {
        case .done(let outcome): return try outcome.get()
        case .lead: return try await lead(with: append)
        }
    }

    /// Whether the queue has stalled and another leader may start. Called under the lock.
    private func startsLeaderWhenStalled() -> Bool {
        let now = ContinuousClock.now
        guard leaders < maximumLeaders, now - lastProgress > stallThreshold else { return false }
        lastProgress = now
        return true
    }

    /// While appends wait behind a busy batch, checks every `stallThreshold` whether the queue
    /// still moves, and hands the first waiting append a lead of its own when it does not.
    /// Without it, appends queued behind a batch that waits on a lock would wait as long as
    /// the lock, even when no later append comes along to notice the stall, and the lock's
    /// holder might be waiting for them.
    private func watch() async {
        while true {
            try? await Task.sleep(for: stallThreshold)
            let (leader, keepWatching): (CheckedContinuation<Turn, Never>?, Bool) = lock.withLock {
                guard !pending.isEmpty, leaders > 0, leaders < maximumLeaders else {
                    watching = false
                    return (nil, false)
                }
                guard startsLeaderWhenStalled() else { return (nil, true) }
                leaders += 1
                watching = false
                return (pending.removeFirst().continuation, false)
            }
            leader?.resume(returning: .lead)
            if !keepWatching { return }
        }
    }

    /// Sends `own` with what waits (one batch), answers the others, and hands the lead on.
    private func lead(with own: PreparedAppend) async throws -> AppendResult {
        if lock.withLock({ lastBatchSize > 1 }) { await Task.yield() }
        let outcome: Result<AppendResult, any Error>
        do {
            outcome = try await client.withConnection { connection in
                let others = self.takeBatch()
                let outcomes = await self.execute([own] + others.map(\.append), on: connection)
                for (waiter, outcome) in zip(others, outcomes.dropFirst()) { waiter.continuation.resume(returning: .done(outcome)) }
                return outcomes[0]
            }
        } catch {
            // No connection could be had: fail what is queued now rather than leave it
            // waiting, and let the next append lead afresh.
            let failure = (error as? PostgresError).map(EventStore.translate) ?? error
            let stranded: [Waiter] = lock.withLock {
                defer {
                    pending.removeAll()
                    leaders -= 1
                }
                return pending
            }
            for waiter in stranded { waiter.continuation.resume(returning: .done(.failure(failure))) }
            throw failure
        }
        handOff()
        return try outcome.get()
    }

    /// The appends that join the leader's: the first `maximumBatch - 1` that wait.
    private func takeBatch() -> [Waiter] {
        lock.withLock {
            let taken = Array(pending.prefix(maximumBatch - 1))
            pending.removeFirst(taken.count)
            lastBatchSize = taken.count + 1
            lastProgress = ContinuousClock.now
            return taken
        }
    }

    /// Gives the lead to the first append that waits, or, when none does, leaves it to the next one to come.
    private func handOff() {
        let next: CheckedContinuation<Turn, Never>? = lock.withLock {
            guard !pending.isEmpty else {
                leaders -= 1
                return nil
            }
            return pending.removeFirst().continuation
        }
        next?.resume(returning: .lead)
    }

    /// Runs one batch, retrying transient failures; every append gets an outcome.
    private func execute(_ appends: [PreparedAppend], on connection: PostgresConnection) async -> [Result<AppendResult, any Error>] {
        var attempt = 0
        while true {
            do {
                let results = try await Self.run(appends, recordedAt: clock.now(), on: connection)
                lock.withLock { lastProgress = ContinuousClock.now }
                wakeups.committed()
                return results
            } catch let error as PostgresError where error.isTransient && attempt < 3 {
                attempt += 1
            } catch {
                let failure = (error as? PostgresError).map(EventStore.translate) ?? error
                return Array(repeating: .failure(failure), count: appends.count)
            }
        }
    }

    /// One round trip, one transaction; per-append outcomes. (Two round trips when the
    /// batch meets an event id stored before.)
    static func run(
        _ appends: [PreparedAppend], recordedAt: Date, on connection: PostgresConnection
    ) async throws -> [Result<AppendResult, any Error>] {
        if appends.count == 1 {
            let append = appends[0]
            let rows = try await connection.query(PreparedAppend.singleSQL, append.singleParameters(recordedAt: recordedAt))
            return [.success(try append.result(rows[0]))]
        }
        let parameters = PreparedAppend.batchParameters(appends, recordedAt: recordedAt)
        let rows: PostgresResult
        do {
            rows = try await connection.query(PreparedAppend.batchSQL, parameters)
        } catch let error as PostgresError where error.code == .uniqueViolation {
            // An event id of the batch is stored already (a retried append, or an id reused):
            // the set-based call rolled back, and the per-append one sorts out which is which.
            rows = try await connection.query(PreparedAppend.eachSQL, parameters)
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
