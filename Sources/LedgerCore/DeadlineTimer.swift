import Foundation

/// One task that runs `fire` when the earliest deadline its owner asked for passes, for owners
/// that hold many waiters with timeouts (a pool's queue, long-poll followers): a sleeping task
/// per waiter would cost a task and a timer for every request that waits.
///
/// `fire` expires what is due (under the owner's own lock) and returns the owner's next
/// deadline, or nil when nothing waits; the timer then sleeps until that one.
public final class DeadlineTimer: @unchecked Sendable {
    private let fire: @Sendable () -> ContinuousClock.Instant?
    private let lock = NSLock()
    /// What the running task sleeps until; nil when none runs.
    private var scheduled: ContinuousClock.Instant?
    private var task: Task<Void, Never>?
    /// While `fire` runs its answer may already be stale: deadlines asked for meanwhile.
    private var firing = false
    private var askedWhileFiring: ContinuousClock.Instant?

    public init(fire: @escaping @Sendable () -> ContinuousClock.Instant?) {
        self.fire = fire
    }

    deinit {
        task?.cancel()
    }

    /// Makes sure `fire` runs no later than `deadline` (soon after it).
    public func schedule(_ deadline: ContinuousClock.Instant) {
        lock.withLock {
            if firing {
                askedWhileFiring = min(askedWhileFiring ?? deadline, deadline)
                return
            }
            if let scheduled, scheduled <= deadline { return }
            start(at: deadline)
        }
    }

    /// Stops the timer (the owner is shutting down).
    public func cancel() {
        lock.withLock {
            task?.cancel()
            task = nil
            scheduled = nil
        }
    }

    /// Under the lock: replaces the running task by one that sleeps until `deadline`.
    private func start(at deadline: ContinuousClock.Instant) {
        task?.cancel()
        scheduled = deadline
        task = Task { [weak self] in await self?.run(until: deadline) }
    }

    private func run(until first: ContinuousClock.Instant) async {
        var deadline = first
        while true {
            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
            let current: Bool = lock.withLock {
                guard !Task.isCancelled else { return false }
                firing = true
                return true
            }
            guard current else { return }
            let next = fire()
            let following: ContinuousClock.Instant? = lock.withLock {
                firing = false
                let asked = askedWhileFiring
                askedWhileFiring = nil
                guard !Task.isCancelled else { return nil }
                let candidates = [next, asked].compactMap { $0 }
                scheduled = candidates.min()
                if scheduled == nil { task = nil }
                return scheduled
            }
            guard let following else { return }
            deadline = following
        }
    }
}
