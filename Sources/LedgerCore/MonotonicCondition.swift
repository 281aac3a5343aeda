import Glibc

/// A lock with a condition whose timed waits run on the monotonic clock.
///
/// Foundation's `NSCondition.wait(until:)` takes a wall-clock `Date`: a clock stepped back
/// while a thread waits would stretch the wait by the step. Short waits that hold other work
/// back (the group-commit flusher gathering appends) must not depend on the wall clock.
public final class MonotonicCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the lock.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes every thread waiting on the condition. Call it holding the lock.
    public func broadcast() {
        pthread_cond_broadcast(condition)
    }

    /// Waits, holding the lock, until woken or `deadline` has passed; false once it has.
    /// Wake-ups may be spurious: re-check what was waited for.
    public func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return false }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = remaining.components
        let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var limit = timespec(
            tv_sec: Int(now.tv_sec) + Int(seconds) + nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        return pthread_cond_timedwait(condition, mutex, &limit) == 0
    }
}
