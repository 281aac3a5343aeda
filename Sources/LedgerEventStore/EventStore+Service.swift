import ServiceLifecycle

/// The store's background work as a member of the service group: the group commit's flushers
/// and stall watches, and the NOTIFYs that wake other processes' followers (`StoreJobs`). List
/// it after the pool and before everything that appends, so it stops after them (answering
/// every queued append) and before the pool drains.
extension EventStore: Service {
    public func run() async {
        await jobs.run(serving: batcher)
    }

    /// Lets appends queue for the group commit from now on, before `run()` starts: for a store
    /// handed to something that runs it (a service group, a test's runner). `run()` must follow,
    /// or the queued appends wait for ever.
    public func prepareToRun() {
        jobs.open()
    }

    /// Runs `body` while the store runs (a one-shot command, a benchmark), then stops it:
    /// appends made meanwhile are group-committed, and commits wake other processes. A store
    /// that runs already (serve's, a test's) just runs `body`.
    public func whileRunning<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        try await jobs.whileRunning(serving: batcher, body)
    }
}
