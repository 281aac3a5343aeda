import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres
import LedgerTestSupport
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import LedgerEventStore

/// The store's background jobs live in its `run()` (`StoreJobs`): appends are group-committed
/// while it runs, commit alone while it does not, and none is lost or left waiting when it stops.
@Suite("Event store: its jobs run in the service group", .timeLimit(.minutes(10)))
struct StoreJobsTests {
    /// `writers` tasks of `perWriter` appends each to streams of their own; the versions each got.
    static func write(_ store: EventStore, writers: Int, perWriter: Int, afterEach: @escaping @Sendable () async -> Void = {})
        async throws -> [UUID: [Int64]]
    {
        try await withThrowingTaskGroup(of: (UUID, [Int64]).self) { group in
            for _ in 0..<writers {
                group.addTask {
                    let stream = UUID()
                    var versions: [Int64] = []
                    for version in 0..<perWriter {
                        let result = try await store.append(
                            to: stream, streamType: "test", subjectID: nil, expected: .exact(Int64(version)),
                            events: [NewEvent(type: "test.appended", payload: Array("{}".utf8))])
                        versions.append(result.lastVersion)
                        await afterEach()
                    }
                    return (stream, versions)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
    }

    @Test("a store that does not run refuses jobs, and each append commits alone")
    func notRunning() async throws {
        #expect(!StoreJobs().start(.flush))
        try await TestPostgres.withDatabase { db in
            let store = EventStore(client: db.client, keyring: SubjectKeyring(masterKey: db.masterKey), clock: db.clock)
            let written = try await Self.write(store, writers: 6, perWriter: 10)
            for versions in written.values { #expect(versions == Array(1...10)) }
            #expect(store.batcher.isIdle)
            let stored = try await db.client.query("SELECT count(*) FROM events")[0].int(0)
            #expect(stored == 60)
        }
    }

    @Test("a store stopped by its service group's graceful shutdown answers every append queued before it")
    func gracefulShutdownAnswersQueued() async throws {
        try await TestPostgres.withDatabase { db in
            let store = EventStore(client: db.client, keyring: SubjectKeyring(masterKey: db.masterKey), clock: db.clock)
            let group = ServiceGroup(
                configuration: .init(services: [.init(service: store)], logger: Logger(label: "test.store-jobs")))
            let acknowledged = SharedCount()
            let written = try await withThrowingTaskGroup(of: [UUID: [Int64]]?.self) { tasks in
                tasks.addTask {
                    try await group.run()
                    return nil
                }
                tasks.addTask {
                    // Stops the store while the writers are in full flow: the rest commit alone.
                    while acknowledged.value < 40 { try await Task.sleep(for: .milliseconds(1)) }
                    await group.triggerGracefulShutdown()
                    return nil
                }
                store.prepareToRun()
                let written = try await Self.write(store, writers: 8, perWriter: 25) { acknowledged.increment() }
                try await tasks.waitForAll()
                return written
            }
            for versions in written.values { #expect(versions == Array(1...25)) }
            #expect(store.batcher.isIdle)
            let stored = try await db.client.query("SELECT count(*) FROM events")[0].int(0)
            #expect(stored == 200)
        }
    }

    @Test("a running store shares transactions between concurrent appends; cancelled, it leaves none waiting")
    func runningBatchesAndCancels() async throws {
        try await TestPostgres.withDatabase { db in
            let store = EventStore(client: db.client, keyring: SubjectKeyring(masterKey: db.masterKey), clock: db.clock)
            let written = try await store.whileRunning { try await Self.write(store, writers: 12, perWriter: 20) }
            for versions in written.values { #expect(versions == Array(1...20)) }
            let transactions = try await db.client.query("SELECT count(DISTINCT tx_id) FROM events")[0].int(0) ?? 0
            #expect(transactions < 240, "240 appends in \(transactions) transactions: nothing was batched")
            // Cancelled in full flow: no append is left waiting (the writers end, with their
            // appends answered or the cancellation), and the queue is empty.
            let writing = Task { try await store.whileRunning { try await Self.write(store, writers: 6, perWriter: 150) } }
            try await Task.sleep(for: .milliseconds(30))
            writing.cancel()
            if case .failure(let error) = await writing.result { #expect(error is CancellationError) }
            #expect(store.batcher.isIdle)
        }
    }

    /// The batch under way may wait on a lock whose holder waits for an append queued behind
    /// it; a cancelled run hands the queued appends back to commit alone rather than leave them
    /// behind the stuck flusher (whose run would then never end either).
    @Test("cancelled while its one flusher waits on a lock: the appends queued behind it commit alone, and the run ends")
    func cancelledBehindALock() async throws {
        try await TestPostgres.withDatabase { db in
            let store = EventStore(
                client: db.client, keyring: SubjectKeyring(masterKey: db.masterKey), clock: db.clock, appendTransactions: 1)
            let locked = UUID()
            let holding = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            // The lock's holder: a transaction that waits (at most 60 s: never a deadlock, only a failure).
            let holder = Task {
                try await db.client.transaction { connection in
                    try await connection.query("SELECT ledger_lock_stream($1)", [.uuid(locked)])
                    holding.continuation.yield()
                    _ = await Task {
                        for await _ in release.stream { return }
                    }.value
                }
            }
            let releaseLater = Task {
                try? await Task.sleep(for: .seconds(60))
                release.continuation.yield()
            }
            for await _ in holding.stream { break }
            let running = Task { await store.run() }
            store.prepareToRun()
            let blocked = Task {
                try await store.append(
                    to: locked, streamType: "test", subjectID: nil, expected: .any,
                    events: [NewEvent(type: "test.appended", payload: Array("{}".utf8))])
            }
            try await db.waitForLockWaits(1, timeout: .seconds(60))
            let queued = Task {
                try await store.append(
                    to: UUID(), streamType: "test", subjectID: nil, expected: .noStream,
                    events: [NewEvent(type: "test.appended", payload: Array("{}".utf8))])
            }
            // Queued behind the one flusher's batch before the run is cancelled.
            while store.batcher.queuedCount == 0 { try await Task.sleep(for: .milliseconds(1)) }
            running.cancel()
            // Committed alone while the lock is still held.
            #expect(try await queued.value.firstVersion == 1)
            #expect(try await db.lockWaits() == 1)
            release.continuation.yield()
            releaseLater.cancel()
            try await holder.value
            #expect(try await blocked.value.firstVersion == 1)
            await running.value
            #expect(store.batcher.isIdle)
        }
    }

    @Test("a store runs again after it stopped, and `whileRunning` on a running store only runs its body")
    func runsAgain() async throws {
        try await TestPostgres.withDatabase { db in
            let store = EventStore(client: db.client, keyring: SubjectKeyring(masterKey: db.masterKey), clock: db.clock)
            for _ in 0..<3 {
                let written = try await store.whileRunning { try await Self.write(store, writers: 4, perWriter: 5) }
                for versions in written.values { #expect(versions == Array(1...5)) }
                #expect(!store.jobs.running)
            }
            let nested = try await store.whileRunning {
                try await store.whileRunning { try await Self.write(store, writers: 2, perWriter: 3) }
            }
            for versions in nested.values { #expect(versions == Array(1...3)) }
            #expect(try await db.client.query("SELECT count(*) FROM events")[0].int(0) == 66)
        }
    }
}

/// A count shared by tasks.
final class SharedCount: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}
