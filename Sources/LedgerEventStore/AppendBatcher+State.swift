extension AppendBatcher {
    /// The group commit's bookkeeping as a pure state machine over the queued appends' waiters
    /// (the batcher's continuations, plain values in `AppendBatcherStateTests`): the queue, the
    /// flushers and the watch counted as running, when the queue last moved, and the flushers
    /// waiting for appends. Each call changes them and says what the caller does next — start a
    /// flusher or a watch, wake a waiting flusher, send a batch, fail the appends given up —
    /// while it holds the batcher's lock; the time is passed in, never read here.
    ///
    /// A flusher's way to its next batch is `prepareBatch`, the waits it asks for (each between
    /// `flusherWaits` and `flusherWaited`, `gathered` after a gather), then `takeBatch`.
    struct State<Waiter> {
        /// A queued append: its waiter, and how many times its batch was sent again already.
        struct Queued {
            let waiter: Waiter
            let resends: Int
        }

        /// What a queued append asks of the caller.
        enum SubmitAction: Equatable {
            /// Nothing: a flusher under way takes it.
            case queued
            /// Broadcast on the lock: a waiting flusher (`gather`, `linger`) takes it now, and
            /// starts a watch if it leaves some behind.
            case wakeWaitingFlusher
            /// Start a flusher, counted as running already.
            case startFlusher
            /// Start a watch, counted as running already: a flusher is busy, and another may
            /// start should the queue stall while no later append comes to notice.
            case startWatch
        }

        /// What a watch does after it slept for `stallThreshold`.
        enum WatchAction: Equatable {
            /// Sleep again: the queue moves.
            case sleepAgain
            /// End: nothing is queued, no flusher runs, or no other may start.
            case stop
            /// Start a flusher, counted as running already, and end: the queue stalled.
            case startFlusher
        }

        /// What a flusher retiring early (its connection broke) leaves to the caller.
        enum RetireAction: Equatable {
            /// Nothing: the queue is empty, or the flushers left serve it.
            case retired
            /// Start a flusher in its place, counted as running already: appends wait, and no
            /// flusher is left.
            case startFlusher
            /// Start a watch, counted as running already: the flusher left may be stuck on a lock.
            case startWatch
        }

        /// What a flusher does after it waited for appends.
        enum TakeAction {
            /// Retire (no longer counted): nothing is queued.
            case retire
            /// Send `batch`, the oldest queued appends; start a watch (counted as running
            /// already) when `startWatch`, for the appends left behind a full batch.
            case send([Queued], startWatch: Bool)
        }

        /// The waits of a flusher before its next batch (`prepareBatch`).
        struct Preparation: Equatable {
            /// Whether it is the only flusher: only a lone one gathers or lingers.
            let alone: Bool
            /// How many appends to wait for up to `gather`, when it gathers.
            let gather: Int?
        }

        let maximumFlushers: Int
        let maximumBatch: Int
        /// How long the queue may stand still before another flusher starts.
        let stallThreshold: Duration
        /// Oldest first; a batch sent again goes back to the front.
        private(set) var pending: [Queued] = []
        private(set) var flushers = 0
        /// Whether a watch is counted as running.
        private(set) var watching = false
        /// When a batch last started or finished (or a flusher started after a stall).
        private(set) var lastProgress: ContinuousClock.Instant
        /// Off after a gather that timed out short (the writers do not come straight back, as
        /// requests over a network do not); on again once they have.
        private(set) var gathers = true
        /// Flushers waiting for appends (`gather`, `linger`), and the fewest queued appends one of
        /// them waits for.
        private(set) var waitingFlushers = 0
        private(set) var wakeAtPending = 1

        /// - Parameter now: when the queue counts as last moved, for the first stall.
        init(maximumFlushers: Int, maximumBatch: Int, stallThreshold: Duration, now: ContinuousClock.Instant) {
            self.maximumFlushers = max(1, maximumFlushers)
            self.maximumBatch = maximumBatch
            self.stallThreshold = stallThreshold
            self.lastProgress = now
        }

        /// Appends waiting for a flusher.
        var queued: Int { pending.count }

        /// Whether nothing is queued or under way: the store may stop.
        var isIdle: Bool { pending.isEmpty && flushers == 0 && !watching }

        /// Queues an append. A lone one on an idle queue starts a flusher at once (no added
        /// latency); later ones wait for the flusher under way, unless the queue stalled.
        mutating func submit(_ waiter: Waiter, now: ContinuousClock.Instant) -> SubmitAction {
            pending.append(Queued(waiter: waiter, resends: 0))
            if waitingFlushers > 0 && pending.count >= wakeAtPending { return .wakeWaitingFlusher }
            if flushers == 0 || startsFlusherWhenStalled(now: now) {
                flushers += 1
                return .startFlusher
            }
            return claimsWatch() ? .startWatch : .queued
        }

        /// A flusher counted as running could not start (the store stopped): uncounted.
        mutating func flusherRefused() {
            flushers -= 1
        }

        /// A watch counted as running could not start, or ended cancelled: uncounted.
        mutating func watchEnded() {
            watching = false
        }

        /// A watch woke: whether the queue stood still for longer than `stallThreshold` while a
        /// flusher is busy and another may start.
        mutating func watchTick(now: ContinuousClock.Instant) -> WatchAction {
            guard !pending.isEmpty, flushers > 0, flushers < maximumFlushers else {
                watching = false
                return .stop
            }
            guard startsFlusherWhenStalled(now: now) else { return .sleepAgain }
            flushers += 1
            watching = false
            return .startFlusher
        }

        /// The waits of a flusher that just sent a batch of `previous` appends. The writers just
        /// answered come back with their next appends at once: a lone flusher gathers up to as
        /// many as it answered, or it would alternate small and large batches, a WAL flush for
        /// each; a second flusher, started by a stall, neither gathers nor lingers, so that one
        /// transaction is in flight again.
        mutating func prepareBatch(after previous: Int) -> Preparation {
            let alone = flushers == 1
            guard alone && previous > 1 else { return Preparation(alone: alone, gather: nil) }
            if pending.count >= previous {
                gathers = true
                return Preparation(alone: true, gather: nil)
            }
            return Preparation(alone: true, gather: gathers ? previous : nil)
        }

        /// The gather `prepareBatch` asked for ended: `arrived` when the appends it waited for
        /// came in time (gathering goes on), else it stops until a batch finds them queued.
        mutating func gathered(_ arrived: Bool) {
            gathers = arrived
        }

        /// Whether the flusher waits `linger` for the next append before it retires: it is alone
        /// and nothing is queued.
        func lingers(_ preparation: Preparation) -> Bool {
            preparation.alone && pending.isEmpty
        }

        /// A flusher waits until `count` appends are queued: a `submit` that brings the queue to
        /// the fewest any waiting flusher waits for wakes them (`wakeWaitingFlusher`).
        mutating func flusherWaits(for count: Int) {
            wakeAtPending = waitingFlushers == 0 ? count : min(wakeAtPending, count)
            waitingFlushers += 1
        }

        /// A wait `flusherWaits` counted ended.
        mutating func flusherWaited() {
            waitingFlushers -= 1
        }

        /// Takes the next batch, at most `maximumBatch` of the oldest appends; a flusher that
        /// finds none retires.
        mutating func takeBatch(now: ContinuousClock.Instant) -> TakeAction {
            guard !pending.isEmpty else {
                flushers -= 1
                return .retire
            }
            let taken = Array(pending.prefix(maximumBatch))
            pending.removeFirst(taken.count)
            lastProgress = now
            // Left behind a full batch: if it waits on a lock, a watch notices.
            return .send(taken, startWatch: !pending.isEmpty && claimsWatch())
        }

        /// A batch committed.
        mutating func committed(now: ContinuousClock.Instant) {
            lastProgress = now
        }

        /// A batch whose connection died goes back to the front of the queue (ahead of every later
        /// append), for another flusher: whether it committed is unknown, and an append is
        /// idempotent by its event ids. Returns the waiters to fail instead, those sent
        /// `AppendBatcher.maximumResends` times already.
        mutating func requeue(_ batch: [Queued]) -> [Waiter] {
            var again: [Queued] = []
            var givenUp: [Waiter] = []
            for queued in batch {
                if queued.resends < AppendBatcher.maximumResends {
                    again.append(Queued(waiter: queued.waiter, resends: queued.resends + 1))
                } else {
                    givenUp.append(queued.waiter)
                }
            }
            pending.insert(contentsOf: again, at: 0)
            return givenUp
        }

        /// A flusher retires early (its batch went back to the queue, or its connection broke).
        mutating func retire() -> RetireAction {
            flushers -= 1
            guard !pending.isEmpty else { return .retired }
            if flushers == 0 {
                flushers += 1
                return .startFlusher
            }
            return claimsWatch() ? .startWatch : .retired
        }

        /// A flusher's connection could not be had or broke: it is uncounted, and every queued
        /// waiter is returned to fail rather than wait (the next append starts a fresh flusher).
        mutating func flusherFailed() -> [Waiter] {
            flushers -= 1
            return drain()
        }

        /// Empties the queue: every waiter, oldest first, to hand back.
        mutating func drain() -> [Waiter] {
            defer { pending.removeAll() }
            return pending.map(\.waiter)
        }

        /// Whether the queue has stood still past `stallThreshold` and another flusher may start:
        /// then the caller counts it, and the queue counts as moved.
        private mutating func startsFlusherWhenStalled(now: ContinuousClock.Instant) -> Bool {
            guard flushers < maximumFlushers, now - lastProgress > stallThreshold else { return false }
            lastProgress = now
            return true
        }

        /// Whether the caller is to start a watch (none runs, and another flusher may start): then
        /// one is counted as running.
        private mutating func claimsWatch() -> Bool {
            guard !watching, flushers < maximumFlushers else { return false }
            watching = true
            return true
        }
    }
}
