import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres
import LedgerTestSupport
import Testing

@testable import LedgerEventStore

/// The group-commit call itself (`AppendBatcher.run`, schema 012): each append of a batch
/// is checked on its own, and the batches the set-based function does not take still get
/// the answers one append at a time would give.
@Suite("Event store: batched appends")
struct AppendBatchTests {
    static func append(
        _ stream: UUID, _ expected: ExpectedVersion, subject: UUID? = nil, events: [NewEvent]? = nil, key: DataKey? = nil
    ) throws -> PreparedAppend {
        try PreparedAppend(
            streamID: stream, streamType: "account", subjectID: subject, expected: expected,
            events: events ?? [AppendTests.event()], key: key)
    }

    static func run(_ appends: [PreparedAppend], on db: TestDatabase) async throws -> [Result<AppendResult, any Error>] {
        let recordedAt = db.clock.now()
        return try await db.client.withConnection { connection in
            try await connection.withBlockingThread { try AppendBatcher.run(appends, recordedAt: recordedAt, on: $0) }
        }
    }

    static func failure(_ outcome: Result<AppendResult, any Error>) -> EventStoreError? {
        guard case .failure(let error) = outcome else { return nil }
        return error as? EventStoreError
    }

    @Test("one batch: each append is checked alone, the rest are written in order and chained")
    func eachAppendCheckedAlone() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let (existing, conflicting, shredded, fresh) = (UUID(), UUID(), UUID(), UUID())
            for stream in [existing, conflicting, shredded] {
                try await store.append(
                    to: stream, streamType: "account", subjectID: stream, expected: .noStream, events: [AppendTests.event()])
            }
            let keys = try await db.client.withConnection { connection in
                (
                    try await store.keyring.dataKey(for: existing, on: connection),
                    try await store.keyring.dataKey(for: fresh, on: connection)
                )
            }
            try await db.client.withConnection { connection in
                _ = try await store.keyring.destroy(subjectID: shredded, at: db.clock.now(), on: connection)
            }

            let outcomes = try await Self.run(
                [
                    try Self.append(existing, .exact(1), subject: existing, key: keys.0),
                    try Self.append(conflicting, .exact(5)),
                    try Self.append(fresh, .noStream, subject: fresh, key: keys.1),
                    try Self.append(shredded, .any, subject: shredded),
                    try Self.append(UUID(), .streamExists),
                ], on: db)

            let written = outcomes.compactMap { try? $0.get() }
            #expect(written.map(\.streamID) == [existing, fresh])
            #expect(written.map(\.firstVersion) == [2, 1])
            #expect(written.allSatisfy { !$0.replayed && $0.firstPosition == $0.lastPosition })
            #expect(written[0].firstPosition < written[1].firstPosition)
            #expect(Self.failure(outcomes[1])?.code == .wrongExpectedVersion)
            #expect(Self.failure(outcomes[1])?.actualVersion == 1)
            #expect(Self.failure(outcomes[3])?.code == .subjectKeyDestroyed)
            #expect(Self.failure(outcomes[4])?.code == .wrongExpectedVersion)
            #expect(Self.failure(outcomes[4])?.actualVersion == 0)

            #expect(try await store.streamVersion(existing) == 2)
            #expect(try await store.streamVersion(fresh) == 1)
            #expect(try await store.streamVersion(conflicting) == 1)
            #expect(try await store.streamVersion(shredded) == 1)
            for stream in [existing, fresh] { #expect(try await store.verify(streamID: stream).ok) }
            #expect(try await store.readStream(fresh).first?.payload == Array("{}".utf8))
        }
    }

    @Test("a stream named twice in one batch is appended in turn, as two appends would be")
    func streamNamedTwice() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            try await store.append(to: stream, streamType: "account", subjectID: nil, expected: .noStream, events: [AppendTests.event()])
            let outcomes = try await Self.run(
                [
                    try Self.append(stream, .exact(1)), try Self.append(stream, .exact(2)), try Self.append(stream, .exact(2)),
                ], on: db)
            #expect(try outcomes[0].get().firstVersion == 2)
            #expect(try outcomes[1].get().firstVersion == 3)
            #expect(Self.failure(outcomes[2])?.actualVersion == 3)
            #expect(try await store.verify(streamID: stream).ok)
        }
    }

    @Test(
        "a batch takes its streams' locks before it writes: a transaction holding one keeps the stream's feed in version order",
        .timeLimit(.minutes(10)))
    func batchWaitsForStreamLock() async throws {
        try await TestPostgres.withDatabase(maximumConnections: 4) { db in
            let store = db.eventStore()
            let (locked, other) = (UUID(), UUID())
            try await store.append(to: locked, streamType: "account", subjectID: nil, expected: .noStream, events: [AppendTests.event()])
            let holding = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await db.client.transaction { connection in
                    store.lockStream(locked, on: connection)
                    // The transaction's id is taken now, before the batch below could write.
                    _ = try await connection.query("SELECT pg_current_xact_id()")
                    holding.continuation.yield()
                    _ = await Task { for await _ in release.stream { return } }.value
                    try await store.append(
                        to: locked, streamType: "account", subjectID: nil, expected: .any, events: [AppendTests.event()],
                        on: connection)
                }
            }
            for await _ in holding.stream { break }
            let batch = Task { try await Self.run([try Self.append(locked, .exact(2)), try Self.append(other, .noStream)], on: db) }
            // Until the batch waits on the lock (a batch that did not take it would be written by then).
            try await db.waitForLockWaits(1)
            release.continuation.yield()
            try await holder.value
            let outcomes = try await batch.value
            // The batch read the head once the lock was granted (exact(2) holds only then).
            #expect(try outcomes[0].get().firstVersion == 3)
            #expect(try outcomes[1].get().firstVersion == 1)
            let feedOrder = try await db.client.query(
                "SELECT stream_version FROM events WHERE stream_id = $1 ORDER BY tx_id, global_position", [.uuid(locked)])
            #expect(try feedOrder.rows.map { try $0.int(0) } == [1, 2, 3])
            #expect(try await store.verify(streamID: locked).ok)
        }
    }

    @Test("a retried append in a batch gets its original result, whatever its expectation says now; a reused id fails alone")
    func retriesInBatch() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let (stream, other, bystander) = (UUID(), UUID(), UUID())
            let original = AppendTests.event()
            let first = try await store.append(to: stream, streamType: "account", subjectID: nil, expected: .noStream, events: [original])

            let outcomes = try await Self.run(
                [
                    try Self.append(stream, .noStream, events: [original]),
                    try Self.append(other, .any, events: [NewEvent(eventID: original.eventID, type: "email.verified", payload: [])]),
                    try Self.append(bystander, .noStream),
                ], on: db)
            let replayed = try outcomes[0].get()
            #expect(replayed.replayed)
            #expect(replayed.firstVersion == first.firstVersion && replayed.firstPosition == first.firstPosition)
            #expect(Self.failure(outcomes[1])?.code == .idempotencyConflict)
            #expect(try outcomes[2].get().firstVersion == 1)
            #expect(try await store.readStream(stream).count == 1)
            #expect(try await store.streamVersion(other) == 0)
        }
    }

    /// What the flusher counts on when it sends a batch again after its connection died: the
    /// same prepared appends (sealed once), sent after they committed, get their first results.
    @Test("the same prepared batch sent twice: the second answers every append with its first result, writing nothing")
    func batchSentTwice() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let existing = UUID()
            try await store.append(to: existing, streamType: "account", subjectID: nil, expected: .noStream, events: [AppendTests.event()])
            let batch = [try Self.append(existing, .exact(1)), try Self.append(UUID(), .noStream), try Self.append(UUID(), .exact(0))]
            let first = try await Self.run(batch, on: db).map { try $0.get() }
            db.clock.advance(by: 5)
            let again = try await Self.run(batch, on: db).map { try $0.get() }
            #expect(first.allSatisfy { !$0.replayed } && again.allSatisfy(\.replayed))
            #expect(again.map(\.firstVersion) == first.map(\.firstVersion))
            #expect(again.map(\.firstPosition) == first.map(\.firstPosition))
            #expect(try await store.streamVersion(existing) == 2)
        }
    }

    @Test("an event id named twice in one batch: the first append is written, the second refused")
    func eventIDNamedTwice() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let (first, second) = (UUID(), UUID())
            let shared = UUID.timeOrdered()
            let appends = [
                try Self.append(first, .noStream, events: [NewEvent(eventID: shared, type: "account.registered", payload: [])]),
                try Self.append(second, .noStream, events: [NewEvent(eventID: shared, type: "account.registered", payload: [])]),
            ]
            // The set-based call refuses the batch as a whole...
            let refused = await #expect(throws: PostgresError.self) {
                try await db.client.withConnection { connection in
                    try await connection.query(PreparedAppend.batchSQL, PreparedAppend.batchParameters(appends, recordedAt: db.clock.now()))
                }
            }
            #expect(refused?.code == .uniqueViolation)
            #expect(try await store.streamVersion(first) == 0)
            // ...and the batcher answers each append as if it had been sent alone.
            let outcomes = try await Self.run(appends, on: db)
            #expect(try outcomes[0].get().firstVersion == 1)
            #expect(Self.failure(outcomes[1])?.code == .idempotencyConflict)
            #expect(try await store.streamVersion(second) == 0)
        }
    }

    @Test("appends of several events share a batch with single ones")
    func severalEventsInBatch() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let (long, short) = (UUID(), UUID())
            let outcomes = try await Self.run(
                [
                    try Self.append(long, .noStream, events: [AppendTests.event(), AppendTests.event("email.verified")]),
                    try Self.append(short, .noStream),
                ], on: db)
            #expect(try outcomes[0].get().lastVersion == 2)
            #expect(try outcomes[1].get().lastVersion == 1)
            #expect(try await store.readStream(long).map(\.type) == ["account.registered", "email.verified"])
            #expect(try await store.verify(streamID: long).ok)
        }
    }
}

@Suite("Event store: group commit")
struct AppendGroupCommitTests {
    /// Writers that each wait for their append before the next (as a command does): every
    /// append must be answered once, with its own result, and the appends that met in the
    /// queue must have shared transactions.
    @Test("writers in a loop: every append answered once and right, batches shared", .timeLimit(.minutes(10)))
    func writersInALoop() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let shared = UUID()
            let (writers, rounds) = (12, 30)
            let sharedAppends = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<writers {
                    group.addTask {
                        let own = UUID()
                        var sharedCount = 0
                        for round in 1...rounds {
                            // The writer's own stream, at the version it expects: a result handed to
                            // the wrong waiter or lost would fail here or hang.
                            let result = try await store.append(
                                to: own, streamType: "account", subjectID: own, expected: round == 1 ? .noStream : .exact(Int64(round - 1)),
                                events: [AppendTests.event("email.verified", "{\"round\":\(round)}")])
                            #expect(result.streamID == own && result.firstVersion == Int64(round) && !result.replayed)
                            if round % 5 == 0 {
                                try await store.append(
                                    to: shared, streamType: "account", subjectID: nil, expected: .any, events: [AppendTests.event()])
                                sharedCount += 1
                            }
                        }
                        #expect(try await store.readStream(own).map(\.streamVersion) == Array(1...Int64(rounds)))
                        return sharedCount
                    }
                }
                return try await group.reduce(0, +)
            }
            let sharedEvents = try await store.readStream(shared)
            #expect(sharedEvents.count == sharedAppends)
            #expect(sharedEvents.map(\.streamVersion) == Array(1...Int64(sharedAppends)))
            #expect(try await store.verify(streamID: shared).ok)
            // Appends committed together carry one transaction id.
            let counts = try await db.client.query("SELECT count(*), count(DISTINCT tx_id) FROM events")[0]
            let (events, transactions) = (try counts.int(0) ?? 0, try counts.int(1) ?? 0)
            #expect(events == Int64(writers * rounds + sharedAppends))
            #expect(transactions < events, "\(transactions) transactions for \(events) appends: no batch was shared")
        }
    }

    /// When the batch's connection cannot be had, the appends queued behind it must fail too
    /// rather than wait for a batch that never comes, and the next append must start afresh.
    @Test("no connection to be had: every waiting append fails, none hangs, and the next ones try again", .timeLimit(.minutes(10)))
    func noConnection() async throws {
        let client = PostgresClient(configuration: .init(url: "postgresql://ledger@127.0.0.1:1/nothing", maximumConnections: 2))
        let store = EventStore(client: client, keyring: SubjectKeyring(masterKey: try MasterKey.generate()))
        for _ in 0..<2 {
            // Unstructured, so that an append left waiting fails the test here instead of hanging it.
            let answers = AsyncStream<Bool>.makeStream()
            for _ in 0..<10 {
                Task {
                    do {
                        try await store.append(
                            to: UUID(), streamType: "account", subjectID: nil, expected: .any, events: [AppendTests.event()])
                        answers.continuation.yield(false)
                    } catch let error as PostgresError {
                        answers.continuation.yield(error.code == .connectionFailed)
                    } catch {
                        answers.continuation.yield(false)
                    }
                }
            }
            let deadline = Task {
                try await Task.sleep(for: .seconds(20))
                answers.continuation.finish()
            }
            var failures: [Bool] = []
            for await failed in answers.stream {
                failures.append(failed)
                if failures.count == 10 { break }
            }
            deadline.cancel()
            #expect(failures == Array(repeating: true, count: 10), "every append answered, with the connection's failure, within 20 s")
        }
        await client.shutdown()
    }

    /// A transaction holding a stream's lock (an account command, say) keeps a standalone
    /// append to that stream waiting; appends to other streams must not wait with it, even
    /// when no later append comes along to notice that the queue stands still.
    @Test("an append waiting on a stream lock does not hold up appends to other streams", .timeLimit(.minutes(10)))
    func stalledBatchDoesNotBlockOthers() async throws {
        try await TestPostgres.withDatabase(maximumConnections: 6) { db in
            let store = EventStore(
                client: db.client, keyring: SubjectKeyring(masterKey: db.masterKey), clock: db.clock,
                appendStallThreshold: .milliseconds(300))
            let locked = UUID()
            let holding = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await db.client.transaction { connection in
                    try await store.append(
                        to: locked, streamType: "account", subjectID: nil, expected: .noStream, events: [AppendTests.event()],
                        on: connection)
                    holding.continuation.yield()
                    // Held until the others are written, or 60 s: never a deadlock, only a failure.
                    _ = await Task { for await _ in release.stream { return } }.value
                }
            }
            let releaseLater = Task {
                try? await Task.sleep(for: .seconds(60))
                release.continuation.yield()
            }
            for await _ in holding.stream { break }
            let waiting = Task {
                try await store.append(to: locked, streamType: "account", subjectID: nil, expected: .any, events: [AppendTests.event()])
            }
            // Until the append above waits on the lock, in the one flusher's batch.
            while try await db.lockWaits() == 0 {
                try await Task.sleep(for: .milliseconds(2))
            }
            let others = try await withThrowingTaskGroup(of: AppendResult.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        try await store.append(
                            to: UUID(), streamType: "account", subjectID: nil, expected: .noStream, events: [AppendTests.event()])
                    }
                }
                return try await group.reduce(into: [AppendResult]()) { $0.append($1) }
            }
            // The append to the locked stream still waits: the others did not need the lock released.
            let stillWaiting = try await db.lockWaits()
            release.continuation.yield()
            releaseLater.cancel()
            try await holder.value
            #expect(others.count == 5 && others.allSatisfy { $0.firstVersion == 1 })
            #expect(stillWaiting == 1, "written while the lock was held, once the queue had stood still")
            #expect(try await waiting.value.firstVersion == 2)
        }
    }

    /// A flusher keeps its connection while appends keep coming (it lingers for the next one),
    /// so one whose connection the server killed must not serve them on it: every later batch
    /// would fail on the dead connection for as long as the writer keeps writing. The batch the
    /// kill met is sent again on the fresh connection (idempotent by its event ids).
    @Test(
        "the flusher's connection killed under a writer that never pauses: no append fails, the rest go through a fresh connection",
        .timeLimit(.minutes(10)))
    func killedFlusherConnection() async throws {
        try await TestPostgres.withDatabase(maximumConnections: 4) { db in
            // A linger far longer than the writer's turnaround: the flusher never retires on its own.
            let jobs = StoreJobs()
            let batcher = AppendBatcher(
                client: db.client, clock: db.clock, wakeups: FeedWakeups(client: db.client, jobs: jobs), jobs: jobs, maximumFlushers: 1,
                linger: .milliseconds(500))
            let stream = UUID()
            let (written, failed) = try await jobs.whileRunning(serving: batcher) {
                var (written, failed) = (0, 0)
                for round in 0..<120 {
                    if round == 40 {
                        // Every other backend of the test's database: the flusher's among them.
                        let killed = try await db.client.query(
                            """
                            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                             WHERE datname = current_database() AND pid <> pg_backend_pid()
                            """)[0].int(0)
                        #expect(killed ?? 0 >= 1)
                    }
                    do {
                        let result = try await batcher.submit(try AppendBatchTests.append(stream, .exact(Int64(written))))
                        written += 1
                        #expect(result.lastVersion == Int64(written))
                    } catch let error as PostgresError {
                        #expect(error.code == .connectionLost)
                        failed += 1
                    }
                }
                return (written, failed)
            }
            #expect(failed == 0, "\(failed) appends failed after the kill")
            #expect(written == 120 - failed)
            let store = db.eventStore()
            #expect(try await store.readStream(stream).count == written)
            #expect(try await store.verify(streamID: stream).ok)
        }
    }
}

@Suite("Event store: append arguments")
struct AppendArgumentTests {
    @Test("metadata JSON is what JSONEncoder writes with sorted keys")
    func metadataJSON() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let samples = [
            EventMetadata(),
            EventMetadata(actor: "account:6f1c2a9e"),
            EventMetadata(actor: "system:purge", correlationID: "c-1", causationID: "e/2", ipHash: "ab\"c\\d", userAgentClass: "ios"),
            EventMetadata(correlationID: "tab\there\nnewline \u{1} ünï", userAgentClass: "web"),
        ]
        for metadata in samples {
            #expect(metadata.json == String(decoding: try encoder.encode(metadata), as: UTF8.self))
            #expect(EventMetadata(json: metadata.json) == metadata)
        }
    }

    @Test("event types: lower snake case segments, at least two, dot-separated")
    func eventTypes() {
        for valid in ["account.registered", "phone.otp_issued", "a.b.c", "v2.x9"] { #expect(NewEvent.isValidType(valid)) }
        for invalid in [
            "", "account", "account.", ".account", "account..x", "Account.registered", "account.9lives",
            "account._x", "account.re-registered", "account.régistered",
        ] {
            #expect(!NewEvent.isValidType(invalid), "\(invalid)")
        }
    }

    @Test("array literals quote and escape free text")
    func arrayLiterals() {
        #expect(PostgresArray.literal(["a", "NULL"]) == "{a,NULL}")
        #expect(PostgresArray.literal(["account", #"we"ird\"#, "ü"], quoted: true) == #"{"account","we\"ird\\","ü"}"#)
    }
}
