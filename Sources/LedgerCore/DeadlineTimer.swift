import Foundation
import Synchronization

/// One task that runs `fire` when the earliest deadline its owner asked for passes, for owners
/// that hold many waiters with timeouts (a pool's queue, long-poll followers): a sleeping task
/// per waiter would cost a task and a timer for every request that waits.
///
/// `fire` expires what is due (under the owner's own lock) and returns the owner's next
/// deadline, or nil when nothing waits; the timer then sleeps until that one.
public final class DeadlineTimer: Sendable {
    private let fire: @Sendable () -> ContinuousClock.Instant?
    private let state = Mutex(State())

    private struct State {
        /// What the running task sleeps until; nil when none runs.
        var scheduled: ContinuousClock.Instant?
        var task: Task<Void, Never>?
        /// While `fire` runs its answer may already be stale: deadlines asked for meanwhile.
        var firing = false
        var askedWhileFiring: ContinuousClock.Instant?
    }

    public init(fire: @escaping @Sendable () -> ContinuousClock.Instant?) {
        self.fire = fire
    }

    deinit {
        state.withLock { $0.task?.cancel() }
    }

    /// Makes sure `fire` runs no later than `deadline` (soon after it).
    public func schedule(_ deadline: ContinuousClock.Instant) {
        state.withLock { state in
            if state.firing {
                state.askedWhileFiring = min(state.askedWhileFiring ?? deadline, deadline)
                return
            }
            if let scheduled = state.scheduled, scheduled <= deadline { return }
            start(at: deadline, &state)
        }
    }

    /// Stops the timer (the owner is shutting down).
    public func cancel() {
        state.withLock { state in
            state.task?.cancel()
            state.task = nil
            state.scheduled = nil
        }
    }

    /// Under the lock: replaces the running task by one that sleeps until `deadline`.
    private func start(at deadline: ContinuousClock.Instant, _ state: inout State) {
        state.task?.cancel()
        state.scheduled = deadline
        state.task = Task { [weak self] in await self?.run(until: deadline) }
    }

    private func run(until first: ContinuousClock.Instant) async {
        var deadline = first
        while true {
            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
            let current: Bool = state.withLock { state in
                guard !Task.isCancelled else { return false }
                state.firing = true
                return true
            }
            guard current else { return }
            let next = fire()
            let following: ContinuousClock.Instant? = state.withLock { state in
                state.firing = false
                let asked = state.askedWhileFiring
                state.askedWhileFiring = nil
                guard !Task.isCancelled else { return nil }
                let candidates = [next, asked].compactMap { $0 }
                state.scheduled = candidates.min()
                if state.scheduled == nil { state.task = nil }
                return state.scheduled
            }
            guard let following else { return }
            deadline = following
        }
    }
}
