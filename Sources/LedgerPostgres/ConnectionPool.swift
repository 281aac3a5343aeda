import Foundation
import LedgerCore

/// The pool's bookkeeping, under a lock rather than in an actor: a checkout that finds an idle
/// connection (nearly all of them) returns at once, with no hop to another executor and no
/// allocation. Connecting happens outside, so the lock is held only for list edits.
///
/// Callers that find every connection busy wait in a bounded FIFO queue; past its bound they
/// fail at once (`poolExhausted`, the service's `503`), so a flood cannot queue without end.
/// Waiting callers give up after the checkout timeout, watched by one `DeadlineTimer` for the
/// whole pool, not a sleeping task each.
final class ConnectionPool: @unchecked Sendable {
    enum Lease {
        case idle(PostgresConnection)
        case openNew
    }

    private struct Waiter {
        let id: UInt64
        let deadline: ContinuousClock.Instant?
        let continuation: CheckedContinuation<Lease, any Error>
    }

    private let maximum: Int
    private let maximumWaiters: Int
    private let checkoutTimeout: Duration?
    private let lock = NSLock()
    private var idle: [PostgresConnection] = []
    private var open = 0
    /// FIFO: `waiters[waitersHead...]` are waiting, oldest first (a head index, so taking the
    /// oldest does not move the rest).
    private var waiters: [Waiter] = []
    private var waitersHead = 0
    private var nextWaiterID: UInt64 = 0
    private var closed = false
    private var timer: DeadlineTimer!

    init(maximum: Int, maximumWaiters: Int = 1024, checkoutTimeout: Duration? = nil) {
        self.maximum = max(1, maximum)
        self.maximumWaiters = max(0, maximumWaiters)
        self.checkoutTimeout = checkoutTimeout
        self.timer = DeadlineTimer { [weak self] in self?.expireDue() }
    }

    /// Callers waiting for a connection now.
    var waiting: Int { lock.withLock { waiters.count - waitersHead } }

    func acquire() async throws -> Lease {
        if let lease = try lock.withLock({ try immediateLease() }) { return lease }
        return try await withCheckedThrowingContinuation { continuation in
            let deadline: ContinuousClock.Instant? = lock.withLock {
                // Again under the same lock as the enqueue: a release between the first look
                // and here must not leave this caller waiting beside an idle connection.
                do {
                    if let lease = try immediateLease() {
                        continuation.resume(returning: lease)
                        return nil
                    }
                } catch {
                    continuation.resume(throwing: error)
                    return nil
                }
                guard waiters.count - waitersHead < maximumWaiters else {
                    continuation.resume(throwing: PostgresError(.poolExhausted, message: "too many callers are waiting for a connection"))
                    return nil
                }
                nextWaiterID += 1
                let deadline = checkoutTimeout.map { ContinuousClock.now + $0 }
                waiters.append(Waiter(id: nextWaiterID, deadline: deadline, continuation: continuation))
                return deadline
            }
            if let deadline { timer.schedule(deadline) }
        }
    }

    /// An idle connection or a free slot, nil when the caller has to wait. Under the lock.
    private func immediateLease() throws -> Lease? {
        guard !closed else { throw PostgresError(.poolClosed, message: "the connection pool is shut down") }
        if let connection = idle.popLast() { return .idle(connection) }
        guard open < maximum else { return nil }
        open += 1
        return .openNew
    }

    /// Times out the waiters whose deadline passed; the oldest remaining one's deadline.
    /// Deadlines are in queue order (one timeout for all), so only the head is looked at.
    private func expireDue() -> ContinuousClock.Instant? {
        let (expired, next): ([Waiter], ContinuousClock.Instant?) = lock.withLock {
            let now = ContinuousClock.now
            var expired: [Waiter] = []
            while let oldest = oldestWaiter(), let deadline = oldest.deadline, deadline <= now { expired.append(popOldestWaiter()) }
            return (expired, oldestWaiter()?.deadline)
        }
        for waiter in expired {
            waiter.continuation.resume(throwing: PostgresError(.poolExhausted, message: "no database connection came free in time"))
        }
        return next
    }

    private func oldestWaiter() -> Waiter? {
        waitersHead < waiters.count ? waiters[waitersHead] : nil
    }

    private func popOldestWaiter() -> Waiter {
        let waiter = waiters[waitersHead]
        waitersHead += 1
        if waitersHead == waiters.count {
            waiters.removeAll(keepingCapacity: true)
            waitersHead = 0
        } else if waitersHead >= 64 && waitersHead * 2 >= waiters.count {
            waiters.removeFirst(waitersHead)
            waitersHead = 0
        }
        return waiter
    }

    /// Takes a connection back: healthy ones go to a waiter or the idle list, broken ones
    /// (or ones left inside a transaction) are closed and their slot handed on.
    func release(_ connection: PostgresConnection) {
        let healthy = connection.isUsable && connection.transactionStatusIsIdle
        let (waiter, lease, kept): (Waiter?, Lease?, Bool) = lock.withLock {
            if healthy && !closed {
                if oldestWaiter() != nil { return (popOldestWaiter(), .idle(connection), true) }
                idle.append(connection)
                return (nil, nil, true)
            }
            open -= 1
            let (waiter, lease) = handSlotToWaiter()
            return (waiter, lease, false)
        }
        // Outside the lock: closing says goodbye to the server.
        if !kept { connection.close() }
        if let waiter, let lease { waiter.continuation.resume(returning: lease) }
    }

    /// A connection could not be opened: its slot goes to the next waiter, if any.
    func openFailed() {
        let (waiter, lease) = lock.withLock {
            open -= 1
            return handSlotToWaiter()
        }
        if let waiter, let lease { waiter.continuation.resume(returning: lease) }
    }

    private func handSlotToWaiter() -> (Waiter?, Lease?) {
        guard oldestWaiter() != nil, open < maximum else { return (nil, nil) }
        open += 1
        return (popOldestWaiter(), .openNew)
    }

    func close() {
        let (connections, waiting): ([PostgresConnection], [Waiter]) = lock.withLock {
            closed = true
            let connections = idle
            open -= idle.count
            idle.removeAll()
            let waiting = Array(waiters[waitersHead...])
            waiters.removeAll()
            waitersHead = 0
            return (connections, waiting)
        }
        timer.cancel()
        for connection in connections { connection.close() }
        for waiter in waiting {
            waiter.continuation.resume(throwing: PostgresError(.poolClosed, message: "the connection pool is shut down"))
        }
    }
}
