import Foundation
import Testing

@testable import LedgerEventStore

@Suite("Feed wake-ups: the state machine without a database")
struct FeedWakeupsTests {
    @Test("a commit wakes every waiter and moves the generation; a stale or cancelled follower does not wait")
    func wakesWaiters() {
        var wakeups = FeedWakeups.Wakeups<String>()
        let deadline = ContinuousClock.now + .seconds(30)
        let (a, b, c) = (wakeups.nextID(), wakeups.nextID(), wakeups.nextID())
        let registered = [
            wakeups.register(a, "a", deadline: deadline, after: 0, cancelled: false),
            wakeups.register(b, "b", deadline: deadline, after: 0, cancelled: false),
            wakeups.register(c, "c", deadline: deadline, after: 0, cancelled: true),
        ]
        #expect(registered == [true, true, false])
        let removed = [wakeups.remove(b), wakeups.remove(b)]
        #expect(removed == ["b", nil])
        let woken = wakeups.wake()
        #expect(woken == ["a"])
        #expect(wakeups.generation == 1)
        let late = wakeups.register(wakeups.nextID(), "late", deadline: deadline, after: 0, cancelled: false)
        #expect(!late)
        #expect(wakeups.waiters.isEmpty)
    }

    @Test("timeouts end only the waits due, and name the next deadline")
    func expiresDue() {
        var wakeups = FeedWakeups.Wakeups<String>()
        let now = ContinuousClock.now
        _ = wakeups.register(wakeups.nextID(), "soon", deadline: now + .seconds(1), after: 0, cancelled: false)
        _ = wakeups.register(wakeups.nextID(), "later", deadline: now + .seconds(9), after: 0, cancelled: false)
        let (due, next) = wakeups.expire(now: now + .seconds(2))
        #expect(due == ["soon"])
        #expect(next == now + .seconds(9))
        let last = wakeups.expire(now: now + .seconds(10))
        #expect(last.due == ["later"] && last.next == nil)
    }

    @Test("commits during a NOTIFY under way ask for one more after it, not one each")
    func coalescesNotifications() {
        var wakeups = FeedWakeups.Wakeups<String>()
        let commits = [wakeups.committed(), wakeups.committed(), wakeups.committed()]
        #expect(commits == [.send, .alreadyUnderWay, .alreadyUnderWay])
        let again = [wakeups.notified(), wakeups.notified()]
        #expect(again == [true, false])
        let next = wakeups.committed()
        #expect(next == .send)
    }
}
