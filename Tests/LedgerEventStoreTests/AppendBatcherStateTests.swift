import Foundation
import Testing

@testable import LedgerEventStore

@Suite("Group commit: the state machine without a database")
struct AppendBatcherStateTests {
    typealias State = AppendBatcher.State<String>

    static let start = ContinuousClock.now

    /// `milliseconds` after `start`.
    static func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        start + .milliseconds(milliseconds)
    }

    static func state(flushers: Int = 2, batch: Int = 64) -> State {
        State(maximumFlushers: flushers, maximumBatch: batch, stallThreshold: .milliseconds(5), now: start)
    }

    /// The batch `takeBatch` sends, and whether it asks for a watch; nil when it retires.
    static func take(_ state: inout State, at milliseconds: Int = 0) -> (waiters: [String], resends: [Int], startWatch: Bool)? {
        guard case .send(let batch, let startWatch) = state.takeBatch(now: at(milliseconds)) else { return nil }
        return (batch.map(\.waiter), batch.map(\.resends), startWatch)
    }

    @Test("a lone append on an idle queue starts one flusher at once")
    func loneAppendStartsFlusher() {
        var state = Self.state()
        #expect(state.isIdle)
        #expect(state.submit("a", now: Self.at(0)) == .startFlusher)
        #expect(state.flushers == 1 && state.queued == 1 && !state.isIdle)
        let taken = Self.take(&state)
        #expect(taken?.waiters == ["a"] && taken?.startWatch == false)
        // The queue empty again, the flusher (after its linger) retires, and the next lone
        // append starts a flusher of its own.
        #expect(Self.take(&state) == nil)
        #expect(state.flushers == 0 && state.isIdle)
        #expect(state.submit("b", now: Self.at(100)) == .startFlusher)
    }

    @Test("appends while a flusher runs only queue, in order, when no other flusher may start")
    func appendsBehindFlusherQueue() {
        var state = Self.state(flushers: 1)
        let actions = ["a", "b", "c", "d"].map { state.submit($0, now: Self.at(1)) }
        #expect(actions == [.startFlusher, .queued, .queued, .queued])
        #expect(state.flushers == 1 && !state.watching)
        // Long past the stall threshold, a lone flusher allowed still means only queueing.
        #expect(state.submit("e", now: Self.at(60)) == .queued)
        #expect(state.pending.map(\.waiter) == ["a", "b", "c", "d", "e"])
    }

    @Test("a stall past the threshold starts another flusher, one per stall, never more than maximumFlushers")
    func stallStartsFlusherUpToMaximum() {
        var state = Self.state(flushers: 3)
        #expect(state.submit("a", now: Self.at(0)) == .startFlusher)
        #expect(Self.take(&state, at: 0)?.waiters == ["a"])
        // The first append behind the busy flusher claims the watch; the next ones only queue
        // until the queue has stood still for longer than the threshold (5 ms).
        #expect(state.submit("b", now: Self.at(1)) == .startWatch)
        #expect(state.submit("c", now: Self.at(5)) == .queued)
        #expect(state.submit("d", now: Self.at(6)) == .startFlusher)
        #expect(state.flushers == 2)
        // The stall counts as progress: a third flusher waits for the queue to stand still again.
        #expect(state.submit("e", now: Self.at(10)) == .queued)
        #expect(state.submit("f", now: Self.at(12)) == .startFlusher)
        #expect(state.flushers == 3)
        #expect(state.submit("g", now: Self.at(60)) == .queued)
        #expect(state.submit("h", now: Self.at(600)) == .queued)
        #expect(state.flushers == 3)
    }

    @Test("a watch is claimed once; its ticks start a flusher only when the queue stalls, and end it")
    func watchClaimedOnce() {
        var state = Self.state()
        #expect(state.submit("a", now: Self.at(0)) == .startFlusher)
        #expect(Self.take(&state, at: 0)?.waiters == ["a"])
        #expect(state.submit("b", now: Self.at(1)) == .startWatch)
        #expect(state.submit("c", now: Self.at(2)) == .queued)
        #expect(state.watching)
        #expect(state.watchTick(now: Self.at(5)) == .sleepAgain)
        #expect(state.watchTick(now: Self.at(6)) == .startFlusher)
        #expect(state.flushers == 2 && !state.watching)
        // At the maximum, neither another flusher nor a watch.
        #expect(state.submit("d", now: Self.at(7)) == .queued)
        #expect(!state.watching)
        // A watch that could not start is uncounted, so a later append may claim one again.
        var refused = Self.state()
        _ = refused.submit("a", now: Self.at(0))
        #expect(refused.submit("b", now: Self.at(1)) == .startWatch)
        refused.watchEnded()
        #expect(refused.submit("c", now: Self.at(2)) == .startWatch)
        // With nothing queued the watch ends.
        _ = Self.take(&refused, at: 3)
        #expect(refused.watchTick(now: Self.at(20)) == .stop)
        #expect(!refused.watching)
    }

    @Test("takeBatch takes at most maximumBatch appends, oldest first, and asks for a watch for those it leaves")
    func takeBatchTakesOldestUpToMaximum() {
        var state = Self.state(flushers: 2, batch: 3)
        let actions = ["a", "b", "c", "d", "e"].map { state.submit($0, now: Self.at(1)) }
        #expect(actions == [.startFlusher, .startWatch, .queued, .queued, .queued])
        // The watch the second append claimed could not start.
        state.watchEnded()
        let first = Self.take(&state, at: 2)
        #expect(first?.waiters == ["a", "b", "c"] && first?.startWatch == true)
        #expect(state.watching)
        let second = Self.take(&state, at: 3)
        #expect(second?.waiters == ["d", "e"] && second?.startWatch == false)
        #expect(Self.take(&state, at: 4) == nil)
        #expect(state.flushers == 0)
    }

    @Test("a batch whose connection died goes back to the front of the queue, each append at most maximumResends times")
    func failedBatchRequeuedFirst() {
        var state = Self.state(flushers: 1)
        _ = state.submit("a", now: Self.at(0))
        _ = state.submit("b", now: Self.at(0))
        guard case .send(let batch, _) = state.takeBatch(now: Self.at(0)) else {
            Issue.record("the flusher takes a and b")
            return
        }
        _ = state.submit("c", now: Self.at(1))
        #expect(state.requeue(batch).isEmpty)
        #expect(state.pending.map(\.waiter) == ["a", "b", "c"])
        #expect(state.pending.map(\.resends) == [1, 1, 0])
        for resends in 2...AppendBatcher.maximumResends {
            guard case .send(let again, _) = state.takeBatch(now: Self.at(resends)) else {
                Issue.record("the batch is taken again")
                return
            }
            #expect(again.map(\.waiter) == ["a", "b", "c"])
            #expect(state.requeue(again).isEmpty)
            #expect(state.pending.map(\.resends) == [resends, resends, resends - 1])
        }
        // Sent again `maximumResends` times, a and b are given up; c goes back to the front.
        guard case .send(let last, _) = state.takeBatch(now: Self.at(9)) else {
            Issue.record("the batch is taken once more")
            return
        }
        #expect(state.requeue(last) == ["a", "b"])
        #expect(state.pending.map(\.waiter) == ["c"])
        #expect(state.pending.map(\.resends) == [AppendBatcher.maximumResends])
    }

    @Test("a flusher retiring with appends left is replaced when it was the last, else leaves a watch to the one still running")
    func retireReplacesFlusherOrWatches() {
        // The last flusher: replaced.
        var alone = Self.state()
        _ = alone.submit("a", now: Self.at(0))
        guard case .send(let batch, _) = alone.takeBatch(now: Self.at(0)) else {
            Issue.record("the flusher takes a")
            return
        }
        #expect(alone.requeue(batch).isEmpty)
        #expect(alone.retire() == .startFlusher)
        #expect(alone.flushers == 1)
        // Nothing queued: it only retires.
        _ = alone.takeBatch(now: Self.at(1))
        #expect(alone.retire() == .retired)
        #expect(alone.isIdle)

        // Two flushers, the other stuck on a lock: the one retiring leaves a watch.
        var two = Self.state()
        _ = two.submit("a", now: Self.at(0))
        guard case .send(let stuck, _) = two.takeBatch(now: Self.at(0)) else {
            Issue.record("the first flusher takes a")
            return
        }
        #expect(two.submit("b", now: Self.at(1)) == .startWatch)
        #expect(two.watchTick(now: Self.at(6)) == .startFlusher)
        _ = Self.take(&two, at: 6)
        #expect(two.submit("c", now: Self.at(7)) == .queued)
        #expect(two.requeue(stuck).isEmpty)
        #expect(two.retire() == .startWatch)
        #expect(two.flushers == 1 && two.watching)
        // The other one retiring too is the last: replaced.
        #expect(two.retire() == .startFlusher)
        #expect(two.flushers == 1)
    }

    @Test("drain hands every waiter back, oldest first, and leaves the state idle")
    func drainEmptiesQueue() {
        var state = Self.state(flushers: 1)
        #expect(state.submit("a", now: Self.at(0)) == .startFlusher)
        _ = state.submit("b", now: Self.at(0))
        _ = state.submit("c", now: Self.at(0))
        // The flusher could not start (the store stopped).
        state.flusherRefused()
        #expect(state.drain() == ["a", "b", "c"])
        #expect(state.isIdle && state.queued == 0)
        #expect(state.drain().isEmpty)
        // A flusher whose connection failed: uncounted, and the queue handed back to fail.
        #expect(state.submit("d", now: Self.at(1)) == .startFlusher)
        _ = state.submit("e", now: Self.at(1))
        #expect(state.flusherFailed() == ["d", "e"])
        #expect(state.isIdle)
    }

    @Test("an append wakes a waiting flusher once the queue holds the fewest appends any waiting flusher waits for")
    func appendWakesWaitingFlusher() {
        var state = Self.state(flushers: 1)
        _ = state.submit("a", now: Self.at(0))
        _ = Self.take(&state, at: 0)
        state.flusherWaits(for: 3)
        #expect(state.submit("b", now: Self.at(1)) == .queued)
        #expect(state.submit("c", now: Self.at(1)) == .queued)
        #expect(state.submit("d", now: Self.at(1)) == .wakeWaitingFlusher)
        state.flusherWaited()
        // Done waiting: appends wake nobody.
        #expect(state.submit("e", now: Self.at(1)) == .queued)
        _ = Self.take(&state, at: 2)
        state.flusherWaits(for: 4)
        state.flusherWaits(for: 1)
        state.flusherWaits(for: 6)
        #expect(state.submit("f", now: Self.at(3)) == .wakeWaitingFlusher)
    }

    @Test("a lone flusher gathers as many appends as it answered, stops after a gather that came up short, and lingers only alone")
    func gatherAndLinger() {
        var state = Self.state()
        _ = state.submit("a", now: Self.at(0))
        _ = Self.take(&state, at: 0)
        // After one append nothing to gather; the empty queue is lingered on.
        let afterOne = state.prepareBatch(after: 1)
        #expect(afterOne == State.Preparation(alone: true, gather: nil) && state.lingers(afterOne))
        for waiter in ["b", "c", "d"] { _ = state.submit(waiter, now: Self.at(1)) }
        state.watchEnded()
        _ = Self.take(&state, at: 1)
        // After three, it gathers three; the gather comes up short, so the next does not.
        #expect(state.prepareBatch(after: 3) == State.Preparation(alone: true, gather: 3))
        state.gathered(false)
        #expect(state.prepareBatch(after: 3) == State.Preparation(alone: true, gather: nil))
        _ = state.submit("e", now: Self.at(2))
        #expect(!state.lingers(state.prepareBatch(after: 3)))
        // Once a batch finds as many queued as it answered, gathering is on again.
        _ = state.submit("f", now: Self.at(2))
        _ = state.submit("g", now: Self.at(2))
        #expect(state.prepareBatch(after: 3) == State.Preparation(alone: true, gather: nil))
        _ = Self.take(&state, at: 3)
        #expect(state.prepareBatch(after: 3) == State.Preparation(alone: true, gather: 3))
        // A second flusher neither gathers nor lingers.
        _ = state.submit("h", now: Self.at(4))
        #expect(state.submit("i", now: Self.at(20)) == .startFlusher)
        _ = Self.take(&state, at: 20)
        let notAlone = state.prepareBatch(after: 3)
        #expect(notAlone == State.Preparation(alone: false, gather: nil) && !state.lingers(notAlone))
    }
}
