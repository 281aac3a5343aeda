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
public final class LookupBatcher<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Looks the keys up (distinct, at most `maximumBatch`), returning what exists.
    public typealias Fetch = @Sendable ([Key]) async throws -> [Key: Value]

    private enum Outcome: @unchecked Sendable {
        case value(Value?)
        case failure(any Error)
        /// Run the next statement for these callers (this one's key included).
        case lead([Waiter])
    }

    private struct Waiter: @unchecked Sendable {
        let key: Key
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var inFlight = 0
        var queued: [Waiter] = []

        /// A statement may go out now: a slot is free and nobody queued before.
        mutating func takeSlot(below maximum: Int) -> Bool {
            guard inFlight < maximum, queued.isEmpty else { return false }
            inFlight += 1
            return true
        }
    }

    private let fetch: Fetch
    private let maximumInFlight: Int
    private let maximumBatch: Int
    private let maximumQueued: Int
    private let state = Mutex(State())

    /// - Parameters:
    ///   - maximumInFlight: statements out at once; more overlap PostgreSQL's work with the
    ///     client's, fewer make each statement carry more keys. Two: on 2 cores, one and two
    ///     measured the same and four a fifth less (BENCHMARKS.md, issue 42).
    ///   - maximumBatch: keys per statement at most.
    ///   - maximumQueued: callers that may wait; the next fails at once with `poolExhausted`
    ///     (the service's `503`), as a caller waiting for a connection would.
    public init(maximumInFlight: Int = 2, maximumBatch: Int = 128, maximumQueued: Int = 1024, fetch: @escaping Fetch) {
        self.fetch = fetch
        self.maximumInFlight = max(1, maximumInFlight)
        self.maximumBatch = max(1, maximumBatch)
        self.maximumQueued = max(0, maximumQueued)
    }

    /// The value for `key`, nil when the lookup found none.
    public func value(for key: Key) async throws -> Value? {
        if state.withLock({ $0.takeSlot(below: maximumInFlight) }) {
            return try await lead(key, others: [])
        }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let immediate: Outcome? = state.withLock { state in
                // Again under the lock of the enqueue: a slot freed since the first look must
                // not leave this caller queued with nothing in flight.
                if state.takeSlot(below: maximumInFlight) { return .lead([]) }
                guard state.queued.count < maximumQueued else {
                    return .failure(PostgresError(.poolExhausted, message: "too many callers are waiting for a lookup"))
                }
                state.queued.append(Waiter(key: key, continuation: continuation))
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
        switch outcome {
        case .value(let value): return value
        case .failure(let error): throw error
        case .lead(let others): return try await lead(key, others: others)
        }
    }

    /// Runs one statement for `key` and `others`, hands the slot on, and answers `others`.
    private func lead(_ key: Key, others: [Waiter]) async throws -> Value? {
        var keys = Set(others.map(\.key))
        keys.insert(key)
        let found: Result<[Key: Value], any Error>
        do {
            found = .success(try await fetch(Array(keys)))
        } catch {
            found = .failure(error)
        }
        // The next statement goes out before this one's callers are answered.
        let next: [Waiter] = state.withLock { state in
            guard !state.queued.isEmpty else {
                state.inFlight -= 1
                return []
            }
            let batch = Array(state.queued.prefix(maximumBatch))
            state.queued.removeFirst(batch.count)
            return batch
        }
        if let leader = next.last {
            leader.continuation.resume(returning: .lead(Array(next.dropLast())))
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
