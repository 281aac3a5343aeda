import ServiceLifecycle
import Synchronization

/// The store's background jobs — group commit's flushers and stall watches, and the coalesced
/// NOTIFYs — run as child tasks of `EventStore.run()`, so that they live inside the service
/// group and none outlives it.
///
/// While the store does not run (a one-shot command, a test that never runs it) `start`
/// refuses, and the callers do the work on their own task instead: an append commits alone
/// (`AppendBatcher.commitAlone`), and other processes' followers find commits by their poll.
final class StoreJobs: Sendable {
    enum Job: Sendable, Equatable { case flush, watch, notify }

    private struct State {
        var jobs: AsyncStream<Job>.Continuation?
        /// The stream `open()` made for the `run()` to come.
        var opened: AsyncStream<Job>?
        /// Off once the store begins to stop: new appends commit alone, while the queued ones
        /// are still served.
        var accepting = false
    }

    private let state = Mutex(State())

    /// Whether new appends may queue for the group commit.
    var accepting: Bool { state.withLock { $0.accepting } }

    /// Starts `job` as a child of `run()`; false when the store does not run.
    func start(_ job: Job) -> Bool {
        guard case .enqueued = state.withLock({ $0.jobs?.yield(job) }) else { return false }
        return true
    }

    /// Takes jobs from now on, before `run()` starts (which must follow): they wait for it.
    func open() {
        state.withLock { state in
            guard state.jobs == nil else { return }
            let (stream, continuation) = AsyncStream.makeStream(of: Job.self)
            (state.jobs, state.opened, state.accepting) = (continuation, stream, true)
        }
    }

    /// Refuses every job from now on, and ends `run()`'s stream: the task running it was
    /// cancelled, so the jobs under way are too, and what they leave queued commits alone.
    func refuse() {
        let jobs = state.withLock { state in
            defer { (state.jobs, state.accepting) = (nil, false) }
            return state.jobs
        }
        jobs?.finish()
    }

    /// Runs the jobs `batcher` and its wake-ups start until the task is cancelled or its
    /// service group shuts down. On a graceful shutdown it stops taking appends, waits until the
    /// batcher is idle (every queued append answered, no job left that could start another),
    /// then for the jobs under way; on cancellation the jobs are cancelled with it, and what they
    /// leave queued commits alone.
    func run(serving batcher: AppendBatcher) async {
        open()
        let opened = state.withLock { state in
            defer { state.opened = nil }
            return state.opened.map { ($0, state.jobs!) }
        }
        guard let (stream, continuation) = opened else { preconditionFailure("EventStore.run() called twice at once") }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    try? await gracefulShutdown()
                    self.state.withLock { $0.accepting = false }
                    // Only while stopping, so a short poll: a job may still start another (a
                    // flusher retiring on a broken connection hands its queue to a fresh one).
                    while !batcher.isIdle {
                        do { try await Task.sleep(for: .milliseconds(1)) } catch { await Task.yield() }
                    }
                    self.state.withLock { $0.jobs = nil }
                    continuation.finish()
                }
                for await job in stream {
                    group.addTask {
                        switch job {
                        case .flush: await batcher.flush()
                        case .watch: await batcher.watch()
                        case .notify: await batcher.wakeups.sendNotifications()
                        }
                    }
                }
            }
        } onCancel: {
            refuse()
        }
    }

    /// Runs `body` while `run(serving:)` runs, then cancels it (`body`'s appends are answered).
    func whileRunning<Value: Sendable>(serving batcher: AppendBatcher, _ body: () async throws -> Value) async throws -> Value {
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Opened first: the body's first appends are group-committed too.
            open()
            group.addTask { await self.run(serving: batcher) }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}
