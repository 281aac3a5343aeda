import LedgerPostgres
import Synchronization
import Testing

/// `LookupBatcher` without a database: the fetch is a function that records what it was asked.
@Suite("PostgreSQL client: concurrent lookups share statements", .timeLimit(.minutes(10)))
struct LookupBatcherTests {
    /// What the fetches saw: how many ran, the most at once, and the largest batch.
    final class FetchLog: Sendable {
        private struct Counts {
            var fetches = 0
            var running = 0
            var mostRunning = 0
            var largestBatch = 0
            var keysAsked = 0
        }

        private let counts = Mutex(Counts())

        func begin(_ keys: [Int]) {
            counts.withLock {
                $0.fetches += 1
                $0.running += 1
                $0.mostRunning = max($0.mostRunning, $0.running)
                $0.largestBatch = max($0.largestBatch, keys.count)
                $0.keysAsked += keys.count
            }
        }

        func end() { counts.withLock { $0.running -= 1 } }

        /// Starts counting the most fetches at once afresh.
        func resetMostRunning() { counts.withLock { $0.mostRunning = $0.running } }

        var fetches: Int { counts.withLock { $0.fetches } }
        var mostRunning: Int { counts.withLock { $0.mostRunning } }
        var largestBatch: Int { counts.withLock { $0.largestBatch } }
        var keysAsked: Int { counts.withLock { $0.keysAsked } }
    }

    /// Even keys exist (their value names them); odd ones are not found.
    static func batcher(
        inFlight: Int, batch: Int = 128, queued: Int = 1024, log: FetchLog, pause: Duration = .milliseconds(2)
    ) -> LookupBatcher<Int, String> {
        // A statement of this test never stalls, however slow the machine.
        LookupBatcher(maximumInFlight: inFlight, maximumBatch: batch, maximumQueued: queued, stalledAfter: .seconds(60)) { keys in
            log.begin(keys)
            defer { log.end() }
            #expect(Set(keys).count == keys.count, "each key once per statement")
            try await Task.sleep(for: pause)
            return Dictionary(uniqueKeysWithValues: keys.filter { $0 % 2 == 0 }.map { ($0, "value \($0)") })
        }
    }

    @Test("a lone caller's lookup goes out at once, for its key alone")
    func loneCaller() async throws {
        let log = FetchLog()
        let batcher = Self.batcher(inFlight: 1, log: log)
        #expect(try await batcher.value(for: 4) == "value 4")
        #expect(try await batcher.value(for: 5) == nil)
        #expect(log.fetches == 2)
        #expect(log.largestBatch == 1)
    }

    @Test("500 concurrent callers each get their own key's value, in fewer statements, never more at once than allowed")
    func concurrentCallers() async throws {
        for inFlight in [1, 2] {
            let log = FetchLog()
            let batcher = Self.batcher(inFlight: inFlight, batch: 64, log: log)
            // Keys repeat (two callers reading one session), and half are not found.
            let answers = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for caller in 0..<500 {
                    group.addTask { (caller, try await batcher.value(for: caller % 250)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(answers.map(\.0)).count == 500)
            for (caller, answer) in answers {
                let key = caller % 250
                #expect(answer == (key % 2 == 0 ? "value \(key)" : nil), "caller \(caller)")
            }
            #expect(log.fetches < 500)
            #expect(log.mostRunning <= inFlight)
            #expect(log.largestBatch <= 64)
            #expect(log.largestBatch > 1)
        }
    }

    @Test("a failed statement fails every caller it carried, and the next lookups go out")
    func failurePropagates() async throws {
        struct Refused: Error {}
        let failing = Atomic(true)
        let batcher = LookupBatcher<Int, Int>(maximumInFlight: 1) { keys in
            try await Task.sleep(for: .milliseconds(5))
            if failing.load(ordering: .relaxed) { throw Refused() }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, $0 * 10) })
        }
        let failures = await withTaskGroup(of: Bool.self) { group in
            for key in 0..<20 {
                group.addTask {
                    do {
                        _ = try await batcher.value(for: key)
                        return false
                    } catch {
                        return error is Refused
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 20)
        failing.store(false, ordering: .relaxed)
        #expect(try await batcher.value(for: 3) == 30)
    }

    /// Holds fetches until opened.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

        func pass() async {
            await withCheckedContinuation { continuation in
                let passNow = state.withLock { state in
                    if !state.open { state.waiting.append(continuation) }
                    return state.open
                }
                if passNow { continuation.resume() }
            }
        }

        func open() {
            for waiter in state.withLock({ state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }) {
                waiter.resume()
            }
        }
    }

    /// Polls `condition` (what another task is about to make true), for at most 10 s.
    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<10_000 where !condition() { try await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }

    @Test("past maximumQueued waiting callers, the next fails at once with poolExhausted; the queue then goes out together")
    func boundedQueue() async throws {
        let log = FetchLog()
        let gate = Gate()
        let batcher = LookupBatcher<Int, Int>(maximumInFlight: 1, maximumBatch: 2, maximumQueued: 2, stalledAfter: .seconds(60)) { keys in
            log.begin(keys)
            defer { log.end() }
            await gate.pass()
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, $0 * 10) })
        }
        let first = Task { try await batcher.value(for: 1) }
        try await Self.eventually { log.fetches == 1 }
        let queued = (2...3).map { key in Task { try await batcher.value(for: key) } }
        try await Self.eventually { batcher.waiting == 2 }
        let refused = await #expect(throws: PostgresError.self) { try await batcher.value(for: 4) }
        #expect(refused?.code == .poolExhausted)
        gate.open()
        #expect(try await first.value == 10)
        #expect(try await queued[0].value == 20)
        #expect(try await queued[1].value == 30)
        #expect(log.fetches == 2)
        #expect(log.keysAsked == 3)
        #expect(batcher.waiting == 0)
    }

    @Test("a queue bound below one batch (LEDGER_DB_MAX_WAITERS=0) still lets a batch queue")
    func queueFloor() async throws {
        let gate = Gate()
        let log = FetchLog()
        let batcher = LookupBatcher<Int, Int>(maximumInFlight: 1, maximumBatch: 8, maximumQueued: 0, stalledAfter: .seconds(60)) { keys in
            log.begin(keys)
            defer { log.end() }
            await gate.pass()
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, $0) })
        }
        let first = Task { try await batcher.value(for: 0) }
        try await Self.eventually { log.fetches == 1 }
        let queued = (1...8).map { key in Task { try await batcher.value(for: key) } }
        try await Self.eventually { batcher.waiting == 8 }
        await #expect(throws: PostgresError.self) { try await batcher.value(for: 9) }
        gate.open()
        #expect(try await first.value == 0)
        for (index, task) in queued.enumerated() { #expect(try await task.value == index + 1) }
    }

    @Test("a statement that hangs holds only its own callers: after stalledAfter the next goes out with the queue")
    func stalledStatement() async throws {
        let hung = Gate()
        let log = FetchLog()
        // The stall's clock, moved by the test.
        let elapsed = Mutex(Duration.zero)
        @Sendable func now() -> ContinuousClock.Instant { .now + elapsed.withLock { $0 } }
        let batcher = LookupBatcher<Int, Int>(maximumInFlight: 1, maximumBatch: 4, stalledAfter: .seconds(2), now: now) { keys in
            log.begin(keys)
            defer { log.end() }
            if keys.contains(0) { await hung.pass() } else { try await Task.sleep(for: .milliseconds(20)) }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, $0) })
        }
        let stuck = Task { try await batcher.value(for: 0) }
        try await Self.eventually { log.fetches == 1 }
        // Queued behind the hung statement while it is young, then carried by a newcomer.
        let queued = Task { try await batcher.value(for: 1) }
        try await Self.eventually { batcher.waiting == 1 }
        elapsed.withLock { $0 += .seconds(3) }
        #expect(try await batcher.value(for: 2) == 2)
        // Caller 2's statement carried the queued caller along: no hand-off was needed.
        #expect(log.fetches == 2)
        #expect(log.largestBatch == 2)
        #expect(try await queued.value == 1)

        // Under load, the hung statement ends: the extra slot was the stall's only, so from
        // then on one statement is out at a time again.
        let load = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for key in 10..<210 {
                    group.addTask {
                        let value = try await batcher.value(for: key)
                        #expect(value == key)
                    }
                }
                try await group.waitForAll()
            }
        }
        try await Self.eventually { batcher.waiting > 100 }
        hung.open()
        #expect(try await stuck.value == 0)
        log.resetMostRunning()
        try await load.value
        #expect(log.mostRunning == 1)
    }

    @Test(
        "a caller queued longer than maximumWait (the pool's checkout timeout) fails with poolExhausted; the statement's own callers still get theirs"
    )
    func queueDeadline() async throws {
        let gate = Gate()
        let log = FetchLog()
        let batcher = LookupBatcher<Int, Int>(maximumInFlight: 1, stalledAfter: .seconds(60), maximumWait: .milliseconds(100)) { keys in
            log.begin(keys)
            await gate.pass()
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, $0) })
        }
        let first = Task { try await batcher.value(for: 1) }
        try await Self.eventually { log.fetches == 1 }
        let started = ContinuousClock.now
        let timedOut = await #expect(throws: PostgresError.self) { try await batcher.value(for: 2) }
        #expect(timedOut?.code == .poolExhausted)
        #expect(ContinuousClock.now - started >= .milliseconds(100))
        #expect(batcher.waiting == 0)
        gate.open()
        #expect(try await first.value == 1)
        #expect(try await batcher.value(for: 3) == 3)
        #expect(log.keysAsked == 2, "the caller that gave up was never looked up")
    }
}
