import Foundation
import LedgerCore
import LedgerPostgres
import LedgerTestSupport
import Logging
import Synchronization
import Testing

@testable import LedgerWorkers

@Suite("Purge leadership", .timeLimit(.minutes(10)))
struct PurgeLeadershipTests {
    /// A lock whose answers the test sets, counting what it was asked.
    final class ScriptedLock: LeadershipLock {
        struct Script {
            var acquire: Result<Bool, PostgresError> = .success(true)
            var held: Result<Bool, PostgresError> = .success(true)
            var acquireCalls = 0
            var heldCalls = 0
            var released = false
        }

        let script = Mutex(Script())

        func tryAcquire() async throws -> Bool {
            try script.withLock {
                $0.acquireCalls += 1
                return try $0.acquire.get()
            }
        }

        func isHeld() async throws -> Bool {
            try script.withLock {
                $0.heldCalls += 1
                return try $0.held.get()
            }
        }

        func release() async { script.withLock { $0.released = true } }
    }

    /// What the leadership did: passes run, reports made.
    final class Record: Sendable {
        let passes = Mutex(0)
        let reports = Mutex<[(leading: Bool, oldestDueSeconds: Double?)]>([])
        let oldestDue = Mutex<Date?>(nil)
        let passFails = Mutex(false)
    }

    static let lost = PostgresError(.connectionLost, message: "server closed the connection unexpectedly")

    func leadership(_ lock: ScriptedLock?, _ record: Record, clock: ManualClock = ManualClock()) -> PurgeLeadership {
        PurgeLeadership(
            lock: lock, interval: .seconds(60), takeover: .seconds(30), clock: clock, logger: Logger(label: "test.purge"),
            pass: {
                record.passes.withLock { $0 += 1 }
                if record.passFails.withLock({ $0 }) { throw Self.lost }
            },
            oldestDue: { record.oldestDue.withLock { $0 } },
            report: { leading, age in record.reports.withLock { $0.append((leading, age)) } })
    }

    @Test("a follower never passes and tries for the lock every half of the takeover bound; once it gets it, it passes at once")
    func follower() async throws {
        let lock = ScriptedLock()
        lock.script.withLock { $0.acquire = .success(false) }
        let record = Record()
        let leadership = leadership(lock, record)
        var state = PurgeLeadership.State()
        let start = ContinuousClock.now
        var now = start
        for _ in 0..<3 {
            let next = await leadership.tick(&state, now: now)
            #expect(next == now + .seconds(15))
            now = next
        }
        #expect(!state.leading && record.passes.withLock { $0 } == 0)
        #expect(lock.script.withLock { $0.acquireCalls } == 3)
        #expect(record.reports.withLock { $0.map(\.leading) } == [false, false, false])

        // The leader died and PostgreSQL freed its lock: the next try wins, and the pass runs then.
        lock.script.withLock { $0.acquire = .success(true) }
        _ = await leadership.tick(&state, now: now)
        #expect(state.leading && record.passes.withLock { $0 } == 1)
        #expect(record.reports.withLock { $0.last?.leading } == true)
    }

    @Test("a leader passes every interval, and between passes makes sure it still holds the lock every half of the takeover bound")
    func leader() async throws {
        let lock = ScriptedLock()
        let record = Record()
        let leadership = leadership(lock, record)
        var state = PurgeLeadership.State()
        let start = ContinuousClock.now
        var now = start
        var ticks: [Duration] = []
        while now < start + .seconds(150) {
            now = await leadership.tick(&state, now: now)
            ticks.append(now - start)
        }
        // Passes at 0, 60, 120 s; checks at 15, 30, 45 s after each.
        #expect(record.passes.withLock { $0 } == 3)
        #expect(Array(ticks.prefix(8)) == [15, 30, 45, 60, 75, 90, 105, 120].map { Duration.seconds($0) })
        #expect(lock.script.withLock { $0.acquireCalls } == 1)
        #expect(lock.script.withLock { $0.heldCalls } == ticks.count - 1)
    }

    @Test("a leader that lost its lock's connection takes the lock again when it is free, and steps down when it is not")
    func lostConnection() async throws {
        let lock = ScriptedLock()
        let record = Record()
        let leadership = leadership(lock, record)
        var state = PurgeLeadership.State()
        let start = ContinuousClock.now
        _ = await leadership.tick(&state, now: start)
        #expect(state.leading && record.passes.withLock { $0 } == 1)

        // The connection broke, nobody else took the lock: leading again, and a pass at once (the
        // gap may have hidden one).
        lock.script.withLock { $0.held = .failure(Self.lost) }
        _ = await leadership.tick(&state, now: start + .seconds(15))
        #expect(state.leading && record.passes.withLock { $0 } == 2)

        // Lost again, and another instance holds the lock now: this one steps down and passes no more.
        lock.script.withLock {
            $0.held = .success(false)
            $0.acquire = .success(false)
        }
        let next = await leadership.tick(&state, now: start + .seconds(30))
        #expect(!state.leading && record.passes.withLock { $0 } == 2)
        #expect(next == start + .seconds(45))
        #expect(record.reports.withLock { $0.map(\.leading) } == [true, true, false])

        // A database that cannot be reached: a follower, who keeps trying.
        lock.script.withLock { $0.acquire = .failure(Self.lost) }
        #expect(await leadership.tick(&state, now: next) == next + .seconds(15))
        #expect(!state.leading && record.passes.withLock { $0 } == 2)
    }

    @Test("a failed pass keeps the lead; the next pass comes an interval later")
    func failedPass() async throws {
        let lock = ScriptedLock()
        let record = Record()
        record.passFails.withLock { $0 = true }
        let leadership = leadership(lock, record)
        var state = PurgeLeadership.State()
        let start = ContinuousClock.now
        _ = await leadership.tick(&state, now: start)
        #expect(state.leading && record.passes.withLock { $0 } == 1)
        _ = await leadership.tick(&state, now: start + .seconds(15))
        #expect(record.passes.withLock { $0 } == 1)
        _ = await leadership.tick(&state, now: start + .seconds(60))
        #expect(record.passes.withLock { $0 } == 2)
    }

    @Test("every instance reports the oldest due purge's age, leader or not; none due is 0; --no-purge only reports")
    func reports() async throws {
        let clock = ManualClock()
        let record = Record()
        let observer = leadership(nil, record, clock: clock)
        var state = PurgeLeadership.State()
        let now = ContinuousClock.now
        #expect(await observer.tick(&state, now: now) == now + .seconds(60))
        record.oldestDue.withLock { $0 = clock.now().addingTimeInterval(-90) }
        _ = await observer.tick(&state, now: now)
        #expect(record.reports.withLock { $0.map(\.leading) } == [false, false])
        #expect(record.reports.withLock { $0.map(\.oldestDueSeconds) } == [0, 90])
        #expect(record.passes.withLock { $0 } == 0)
    }

    @Test("the advisory lock: one session holds it; a killed session frees it at once for another; release frees it too")
    func advisoryLock() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let first = SessionAdvisoryLock(client: db.client, key: PurgeLeadership.lockKey, keepaliveSeconds: (idle: 10, interval: 5))
            let second = SessionAdvisoryLock(client: db.client, key: PurgeLeadership.lockKey)
            #expect(try await first.isHeld() == false)
            #expect(try await first.tryAcquire())
            #expect(try await first.isHeld())
            #expect(try await second.tryAcquire() == false)
            #expect(try await second.isHeld() == false)
            // Not a connection of the pool's: the pool's own sessions hold nothing.
            let holders = try await db.client.query(
                """
                SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
                WHERE l.locktype = 'advisory' AND a.datname = current_database() AND a.application_name = 'ledger-lock'
                """)
            #expect(try holders[0].int(0) == 1)

            // The holder's session ends as a killed process's would (waiting until it has).
            try await db.client.query(
                """
                SELECT pg_terminate_backend(pid, 5000) FROM pg_locks
                WHERE locktype = 'advisory' AND granted AND objid::bigint = ($1::bigint & 4294967295)
                  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """,
                [.int(PurgeLeadership.lockKey)])
            #expect(try await second.tryAcquire())
            // It finds out on its next question (an error, or false when libpq noticed first).
            #expect((try? await first.isHeld()) != true)
            #expect(try await first.isHeld() == false)
            #expect(try await first.tryAcquire() == false)

            await second.release()
            #expect(try await first.tryAcquire())
            #expect(try await first.isHeld())
            await first.release()
        }
    }
}
