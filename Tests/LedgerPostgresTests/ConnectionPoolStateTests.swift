import Foundation
import Testing

@testable import LedgerPostgres

@Suite("Connection pool: the state machine without a database")
struct ConnectionPoolStateTests {
    typealias State = ConnectionPool.State<String, String>

    @Test("idle connections first, then free slots, then a bounded FIFO queue")
    func checkouts() {
        var state = State(maximum: 2, maximumWaiters: 1)
        let first = state.acquire()
        let second = state.acquire()
        guard case .openNew = first, case .openNew = second else {
            Issue.record("the first two checkouts open connections: \(first), \(second)")
            return
        }
        guard case .wait = state.acquire() else {
            Issue.record("a third checkout waits")
            return
        }
        let queued = [state.enqueue("w1", deadline: nil), state.enqueue("w2", deadline: nil)]
        #expect(queued == [true, false])
        // A returned connection goes to the oldest waiter, not the idle list.
        guard case .handedTo("w1") = state.release("c1", healthy: true) else {
            Issue.record("the waiter gets the connection")
            return
        }
        guard case .kept = state.release("c1", healthy: true) else {
            Issue.record("with no one waiting it is kept")
            return
        }
        guard case .idle("c1") = state.acquire() else {
            Issue.record("an idle connection is lent before a slot is opened")
            return
        }
        #expect(state.open == 2 && state.waiting == 0)
    }

    @Test("a broken connection's slot goes to a waiter, who opens a new one; a failed open hands its slot on")
    func brokenConnections() {
        var state = State(maximum: 1, maximumWaiters: 4)
        _ = state.acquire()
        _ = state.enqueue("w1", deadline: nil)
        _ = state.enqueue("w2", deadline: nil)
        guard case .close(slotTo: "w1") = state.release("broken", healthy: false) else {
            Issue.record("the broken connection is closed and its slot handed to the oldest waiter")
            return
        }
        #expect(state.open == 1)
        let next = state.openFailed()
        #expect(next == "w2")
        #expect(state.open == 1)
        let none = state.openFailed()
        #expect(none == nil)
        #expect(state.open == 0)
    }

    @Test("waiters time out oldest first; closing fails the rest and hands back the idle connections")
    func timeoutsAndClosing() {
        var state = State(maximum: 1, maximumWaiters: 4)
        let now = ContinuousClock.now
        _ = state.acquire()
        _ = state.enqueue("early", deadline: now + .seconds(1))
        _ = state.enqueue("late", deadline: now + .seconds(5))
        let (expired, next) = state.expire(now: now + .seconds(2))
        #expect(expired == ["early"] && next == now + .seconds(5))
        guard case .handedTo("late") = state.release("c1", healthy: true), case .kept = state.release("c1", healthy: true) else {
            Issue.record("the connection goes to the remaining waiter, then idle")
            return
        }
        _ = state.enqueue("w3", deadline: nil)
        let (idle, failed) = state.close()
        #expect(idle == ["c1"] && failed == ["w3"])
        guard case .closed = state.acquire(), case .close(slotTo: nil) = state.release("c2", healthy: true) else {
            Issue.record("a closed pool lends nothing and closes what comes back")
            return
        }
    }
}
