import LedgerCore
import Synchronization

/// Runs concurrent lookups of one kind as few statements: while `maximumInFlight` statements
/// are out, callers queue, and the next statement looks up every queued key at once.
///
/// The hot reads (a session by its access token's hash) are one indexed lookup each, so most of
/// their cost is the statement around it: a round trip, a wake-up of a PostgreSQL backend and of
/// the client, a bind and an execute. Under load, one statement for many keys spreads that cost;
/// a lone caller is never delayed (nothing in flight: its statement goes out at once).
///
/// No task is made per batch: the caller that finds a free slot runs the statement in its own
/// task, and when it is done hands the next batch to one of the queued callers, whose task then
/// runs it. Each caller gets the value for its own key only.
///
public final class LookupBatcher<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Looks the keys up (distinct, at most `maximumBatch`), returning what exists.
    public typealias Fetch = @Sendable ([Key]) async throws -> [Key: Value]

    @usableFromInline
    enum Outcome: Sendable {
        case value(Value?)
        case failure(any Error)
        /// Run the next statement (as leader number `UInt64`) for these callers (this one's
        /// key included).
        case lead(leader: UInt64, others: [Waiter])
    }

    @usableFromInline
    struct Waiter: Sendable {
        @usableFromInline let key: Key
        /// When it stops waiting (`maximumWait`), oldest first as the queue is.
        @usableFromInline let deadline: ContinuousClock.Instant?
        @usableFromInline let continuation: CheckedContinuation<Outcome, Never>

        @inlinable
        init(key: Key, deadline: ContinuousClock.Instant?, continuation: CheckedContinuation<Outcome, Never>) {
            self.key = key
            self.deadline = deadline
            self.continuation = continuation
        }
    }

    @usableFromInline
    struct State {
        /// When each statement now out went out, by its leader's number.
        @usableFromInline var inFlight: [UInt64: ContinuousClock.Instant] = [:]
        @usableFromInline var nextLeader: UInt64 = 0
        @usableFromInline var queued: [Waiter] = []

        @inlinable
        init() {}

        /// A statement may go out now, as leader number `leader`, for the caller and `others`:
        /// when a slot is free (nobody is queued then), or when every statement out has stalled:
        /// then one more goes out and takes the queue along, so a connection that hangs holds
        /// only its own batch (unbatched, it held one caller).
        @inlinable
        mutating func takeSlot(
            below maximum: Int, batch maximumBatch: Int, stalledAfter: Duration, now: () -> ContinuousClock.Instant
        ) -> (leader: UInt64, others: [Waiter])? {
            guard hasSlot(below: maximum, stalledAfter: stalledAfter, now: now) else { return nil }
            return (startStatement(at: now()), takeQueued(maximumBatch - 1))
        }

        /// Fewer than `maximum` statements are out, or every one out has stalled.
        @inlinable
        func hasSlot(below maximum: Int, stalledAfter: Duration, now: () -> ContinuousClock.Instant) -> Bool {
            guard inFlight.count >= maximum else { return true }
            let now = now()
            return inFlight.values.allSatisfy { now - $0 > stalledAfter }
        }

        /// Takes the waiters whose deadline has passed; returns them and the next deadline.
        @inlinable
        mutating func takeExpired(now: ContinuousClock.Instant) -> (expired: [Waiter], next: ContinuousClock.Instant?) {
            let expired = queued.prefix { $0.deadline.map { $0 <= now } ?? false }
            queued.removeFirst(expired.count)
            return (Array(expired), queued.first?.deadline)
        }

        @inlinable
        mutating func takeQueued(_ count: Int) -> [Waiter] {
            let taken = Array(queued.prefix(count))
            queued.removeFirst(taken.count)
            return taken
        }

        @inlinable
        mutating func startStatement(at time: ContinuousClock.Instant) -> UInt64 {
            nextLeader &+= 1
            inFlight[nextLeader] = time
            return nextLeader
        }
    }

    @usableFromInline let fetch: Fetch
    @usableFromInline let maximumInFlight: Int
    @usableFromInline let maximumBatch: Int
    @usableFromInline let maximumQueued: Int
    @usableFromInline let stalledAfter: Duration
    @usableFromInline let maximumWait: Duration?
    /// What statements' starts and stalls are timed by; tests move it instead of sleeping.
    @usableFromInline let now: @Sendable () -> ContinuousClock.Instant
    @usableFromInline let state = Mutex(State())
    /// Times out the queue's waiters; set at the end of `init` (its task holds this weakly).
    @usableFromInline let timer = Mutex<DeadlineTimer?>(nil)

    /// - Parameters:
    ///   - maximumInFlight: statements out at once; more overlap PostgreSQL's work with the
    ///     client's, fewer make each statement carry more keys. Two: on 2 cores, one and two
    ///     measured the same and four 15–17% less (BENCHMARKS.md, the authenticated reads).
    ///   - maximumBatch: keys per statement at most.
    ///   - maximumQueued: callers that may wait (at least `maximumBatch`); the next fails at
    ///     once with `poolExhausted` (the service's `503`), as a caller waiting for a connection
    ///     would.
    ///   - stalledAfter: a statement out this long no longer holds its slot.
    ///   - maximumWait: how long a caller may wait in the queue (the pool's checkout timeout)
    ///     before it fails with `poolExhausted`; nil waits as long as it takes. Timed by
    ///     `DeadlineTimer` on the real clock, as the pool's waiters are.
    ///   - now: the clock of `stalledAfter`.
    public init(
        maximumInFlight: Int = 2, maximumBatch: Int = 128, maximumQueued: Int = 1024, stalledAfter: Duration = .seconds(1),
        maximumWait: Duration? = nil, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
        fetch: @escaping Fetch
    ) {
        self.fetch = fetch
        self.maximumInFlight = max(1, maximumInFlight)
        self.maximumBatch = max(1, maximumBatch)
        self.maximumQueued = max(self.maximumBatch, maximumQueued)
        self.stalledAfter = stalledAfter
        self.maximumWait = maximumWait
        self.now = now
        let timer = DeadlineTimer { [weak self] in self?.expireDue() }
        self.timer.withLock { $0 = timer }
    }

    deinit {
        timer.withLock { $0?.cancel() }
    }

    /// Callers queued now, behind the statements out.
    public var waiting: Int { state.withLock { $0.queued.count } }

    /// The value for `key`, nil when the lookup found none.
    ///
    /// The statement runs in the task of one of the callers it carries, so it must not heed
    /// that task's cancellation (nothing in `PostgresClient.query` does): one caller going away
    /// would fail the others.
    @inlinable
    public func value(for key: Key) async throws -> Value? {
        if let slot = state.withLock({ $0.takeSlot(below: maximumInFlight, batch: maximumBatch, stalledAfter: stalledAfter, now: now) }) {
            return try await lead(slot.leader, key, others: slot.others)
        }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            var deadline: ContinuousClock.Instant?
            let immediate: Outcome? = state.withLock { state in
                // Again under the lock of the enqueue: a slot freed since the first look must
                // not leave this caller queued with nothing in flight.
                if let slot = state.takeSlot(below: maximumInFlight, batch: maximumBatch, stalledAfter: stalledAfter, now: now) {
                    return .lead(leader: slot.leader, others: slot.others)
                }
                guard state.queued.count < maximumQueued else {
                    return .failure(PostgresError(.poolExhausted, message: "too many callers are waiting for a lookup"))
                }
                // Taken under the lock, so the queue stays in deadline order.
                deadline = maximumWait.map { ContinuousClock.now + $0 }
                state.queued.append(Waiter(key: key, deadline: deadline, continuation: continuation))
                return nil
            }
            if let immediate {
                continuation.resume(returning: immediate)
            } else if let deadline {
                timer.withLock { $0 }?.schedule(deadline)
            }
        }
        switch outcome {
        case .value(let value): return value
        case .failure(let error): throw error
        case .lead(let leader, let others): return try await lead(leader, key, others: others)
        }
    }

    /// Fails the callers that waited `maximumWait` (the timer's work); returns the next deadline.
    private func expireDue() -> ContinuousClock.Instant? {
        let (expired, next) = state.withLock { $0.takeExpired(now: .now) }
        for waiter in expired {
            waiter.continuation.resume(returning: .failure(PostgresError(.poolExhausted, message: "no lookup went out in time")))
        }
        return next
    }

    /// Runs one statement for `key` and `others`, hands its slot on, and answers `others`.
    @inlinable
    func lead(_ leader: UInt64, _ key: Key, others: [Waiter]) async throws -> Value? {
        var keys = Set(others.map(\.key))
        keys.insert(key)
        let found: Result<[Key: Value], any Error>
        do {
            found = .success(try await fetch(Array(keys)))
        } catch {
            found = .failure(error)
        }
        // The next statement goes out before this one's callers are answered.
        // After a stall let one more out, the slots shrink back as statements finish: the ones
        // still out take the queue when they are done.
        let next: (leader: UInt64, batch: [Waiter])? = state.withLock { state in
            state.inFlight.removeValue(forKey: leader)
            guard !state.queued.isEmpty, state.hasSlot(below: maximumInFlight, stalledAfter: stalledAfter, now: now) else { return nil }
            return (state.startStatement(at: now()), state.takeQueued(maximumBatch))
        }
        if let next, let nextLeader = next.batch.last {
            nextLeader.continuation.resume(returning: .lead(leader: next.leader, others: Array(next.batch.dropLast())))
        }
        for waiter in others {
            switch found {
            case .success(let values): waiter.continuation.resume(returning: .value(values[waiter.key]))
            case .failure(let error): waiter.continuation.resume(returning: .failure(error))
            }
        }
        return try found.get()[key]
    }
}
