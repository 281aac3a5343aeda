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
        /// The stream `open()` made, until a `run()` takes it.
        var opened: AsyncStream<Job>?
        /// Which opening `jobs` belongs to: a run ends only its own (an earlier run still winding
        /// down must not close the stream a later `open()` made).
        var generation = 0
        /// Whether a `run()` is reading the stream.
        var running = false
        /// Off once the store begins to stop: new appends commit alone, while the queued ones
        /// are still served.
        var accepting = false
    }

    private let state = Mutex(State())

    /// Whether new appends may queue for the group commit.
    var accepting: Bool { state.withLock { $0.accepting } }

    /// Whether a `run()` is serving the jobs.
    var running: Bool { state.withLock { $0.running } }

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
            state.generation += 1
            (state.jobs, state.opened, state.accepting) = (continuation, stream, true)
        }
    }

    /// Refuses every job from now on, and ends the stream of opening `generation` (when it is
    /// still the current one).
    private func close(_ generation: Int) {
        let jobs = state.withLock { state -> AsyncStream<Job>.Continuation? in
            guard state.generation == generation else { return nil }
            defer { (state.jobs, state.accepting) = (nil, false) }
            return state.jobs
        }
        jobs?.finish()
    }

    /// Runs the jobs `batcher` and its wake-ups start until the task is cancelled or its
    /// service group shuts down. On a graceful shutdown it stops taking appends, waits until the
    /// batcher is idle (every queued append answered, no job left that could start another),
    /// then for the jobs under way. On cancellation it refuses further jobs and hands the queued
    /// appends back to their callers to commit alone (a batch under way may wait on a lock whose
    /// holder waits for one of them), then waits for the jobs under way.
    /// - Parameter claimed: `whileRunning` marked the run as running already.
    func run(serving batcher: AppendBatcher, claimed: Bool = false) async {
        open()
        let taken = state.withLock { state -> (AsyncStream<Job>, AsyncStream<Job>.Continuation, Int)? in
            guard claimed || !state.running, let stream = state.opened, let jobs = state.jobs else { return nil }
            state.opened = nil
            state.running = true
            return (stream, jobs, state.generation)
        }
        guard let (stream, continuation, generation) = taken else { preconditionFailure("EventStore.run() called twice at once") }
        defer { state.withLock { $0.running = false } }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    // Cancelled: `onCancel` has closed the stream.
                    guard (try? await gracefulShutdown()) != nil else { return }
                    self.state.withLock { if $0.generation == generation { $0.accepting = false } }
                    // Only while stopping, so a short poll: a job may still start another (a
                    // flusher retiring on a broken connection hands its queue to a fresh one).
                    while !batcher.isIdle {
                        guard (try? await Task.sleep(for: .milliseconds(1))) != nil else { return }
                    }
                    self.close(generation)
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
            close(generation)
            continuation.finish()
            batcher.returnQueued()
        }
    }

    /// Runs `body` while `run(serving:)` runs, then cancels it (`body`'s appends are answered);
    /// only `body` when the store runs already.
    func whileRunning<Value: Sendable>(serving batcher: AppendBatcher, _ body: () async throws -> Value) async throws -> Value {
        // Claimed at once, so that a `whileRunning` inside `body` sees the run coming.
        let claimed = state.withLock { state in
            defer { state.running = true }
            return !state.running
        }
        guard claimed else { return try await body() }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            // Opened first: the body's first appends are group-committed too.
            open()
            group.addTask { await self.run(serving: batcher, claimed: true) }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}
