import Foundation
import LedgerCore
import Testing

/// An owner of waiters with deadlines, as the pool and the feed's followers are.
private final class Waiters: @unchecked Sendable {
    private let lock = NSLock()
    private var deadlines: [Int: ContinuousClock.Instant] = [:]
    private var expired: [Int] = []
    private(set) var fires = 0
    var timer: DeadlineTimer!

    init() {
        timer = DeadlineTimer { [weak self] in self?.expireDue() }
    }

    func add(_ id: Int, after delay: Duration) {
        let deadline = ContinuousClock.now + delay
        lock.withLock { deadlines[id] = deadline }
        timer.schedule(deadline)
    }

    var expiredInOrder: [Int] { lock.withLock { expired } }

    private func expireDue() -> ContinuousClock.Instant? {
        lock.withLock {
            fires += 1
            let now = ContinuousClock.now
            for (id, deadline) in deadlines.sorted(by: { $0.value < $1.value }) where deadline <= now {
                expired.append(id)
                deadlines.removeValue(forKey: id)
            }
            return deadlines.values.min()
        }
    }
}

@Suite("DeadlineTimer: one task times out many waiters", .timeLimit(.minutes(10)))
struct DeadlineTimerTests {
    /// Waits for `condition`, failing the test (not hanging it) after 30 s.
    func waitUntil(_ condition: () -> Bool) async throws {
        let start = ContinuousClock.now
        while !condition() {
            guard ContinuousClock.now - start < .seconds(30) else {
                Issue.record("timed out")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test("an earlier deadline asked for after a later one fires first; the later one waits its time")
    func earliestFirst() async throws {
        let waiters = Waiters()
        // An hour away: it must not fire in this test, however slow the machine.
        waiters.add(1, after: .seconds(3600))
        waiters.add(2, after: .milliseconds(50))
        try await waitUntil { waiters.expiredInOrder == [2] }
        waiters.add(3, after: .milliseconds(20))
        try await waitUntil { waiters.expiredInOrder == [2, 3] }
        waiters.add(4, after: .milliseconds(10))
        try await waitUntil { waiters.expiredInOrder == [2, 3, 4] }
        try await Task.sleep(for: .milliseconds(50))
        #expect(waiters.expiredInOrder == [2, 3, 4])
    }

    @Test("a thousand waiters with the same timeout are expired in a few firings, not one each")
    func manyWaiters() async throws {
        let waiters = Waiters()
        for id in 0..<1000 { waiters.add(id, after: .milliseconds(100)) }
        try await waitUntil { waiters.expiredInOrder.count == 1000 }
        #expect(Set(waiters.expiredInOrder) == Set(0..<1000))
        #expect(waiters.fires < 1000)
    }

    @Test("deadlines asked for from many threads at once are all honoured")
    func concurrentSchedules() async throws {
        let waiters = Waiters()
        await withTaskGroup(of: Void.self) { group in
            for id in 0..<200 {
                group.addTask { waiters.add(id, after: .milliseconds(Int64(id % 7) * 10)) }
            }
        }
        try await waitUntil { waiters.expiredInOrder.count == 200 }
    }
}
