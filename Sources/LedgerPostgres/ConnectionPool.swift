import Foundation
import LedgerCore
import Synchronization

/// The pool's bookkeeping, under a lock rather than in an actor: a checkout that finds an idle
/// connection (nearly all of them) returns at once, with no hop to another executor and no
/// allocation. Connecting happens outside, so the lock is held only for list edits
/// (`ConnectionPool.State`, a pure state machine).
///
/// Callers that find every connection busy wait in a bounded FIFO queue; past its bound they
/// fail at once (`poolExhausted`, the service's `503`), so a flood cannot queue without end.
/// Waiting callers give up after the checkout timeout, watched by one `DeadlineTimer` for the
/// whole pool, not a sleeping task each.
final class ConnectionPool: Sendable {
    enum Lease {
        case idle(PostgresConnection)
        case openNew
    }

    private typealias Waiter = CheckedContinuation<Lease, any Error>

    private let checkoutTimeout: Duration?
    private let state: Mutex<State<PostgresConnection, Waiter>>
    /// Times out the waiters; set at the end of `init` (its task holds this weakly).
    private let timer = Mutex<DeadlineTimer?>(nil)

    init(maximum: Int, maximumWaiters: Int = 1024, checkoutTimeout: Duration? = nil) {
        self.checkoutTimeout = checkoutTimeout
        self.state = Mutex(State(maximum: maximum, maximumWaiters: maximumWaiters))
        let timer = DeadlineTimer { [weak self] in self?.expireDue() }
        self.timer.withLock { $0 = timer }
    }

    /// Callers waiting for a connection now.
    var waiting: Int { state.withLock { $0.waiting } }

    func acquire() async throws -> Lease {
        if let lease = try Self.lease(state.withLock { $0.acquire() }) { return lease }
        return try await withCheckedThrowingContinuation { (continuation: Waiter) in
            enum Next { case resume(Lease), fail(any Error), wait(ContinuousClock.Instant?) }
            let next: Next = state.withLock { state in
                // Again under the same lock as the enqueue: a release between the first look
                // and here must not leave this caller waiting beside an idle connection.
                do {
                    if let lease = try Self.lease(state.acquire()) { return .resume(lease) }
                } catch {
                    return .fail(error)
                }
                let deadline = checkoutTimeout.map { ContinuousClock.now + $0 }
                guard state.enqueue(continuation, deadline: deadline) else {
                    return .fail(PostgresError(.poolExhausted, message: "too many callers are waiting for a connection"))
                }
                return .wait(deadline)
            }
            switch next {
            case .resume(let lease): continuation.resume(returning: lease)
            case .fail(let error): continuation.resume(throwing: error)
            case .wait(let deadline): if let deadline { timer.withLock { $0 }?.schedule(deadline) }
            }
        }
    }

    /// What an immediate answer gives the caller: a lease, nil (wait), or the pool's closing.
    private static func lease(_ immediate: State<PostgresConnection, Waiter>.Immediate) throws -> Lease? {
        switch immediate {
        case .idle(let connection): return .idle(connection)
        case .openNew: return .openNew
        case .wait: return nil
        case .closed: throw PostgresError(.poolClosed, message: "the connection pool is shut down")
        }
    }

    /// Times out the waiters whose deadline passed; the oldest remaining one's deadline.
    private func expireDue() -> ContinuousClock.Instant? {
        let (expired, next) = state.withLock { $0.expire(now: .now) }
        for waiter in expired {
            waiter.resume(throwing: PostgresError(.poolExhausted, message: "no database connection came free in time"))
        }
        return next
    }

    /// Takes a connection back: healthy ones go to a waiter or the idle list, broken ones
    /// (or ones left inside a transaction) are closed and their slot handed on.
    func release(_ connection: PostgresConnection) {
        let healthy = connection.isUsable && connection.transactionStatusIsIdle
        switch state.withLock({ $0.release(connection, healthy: healthy) }) {
        case .kept: break
        case .handedTo(let waiter): waiter.resume(returning: .idle(connection))
        case .close(let slotTo):
            // Outside the lock: closing says goodbye to the server.
            connection.close()
            slotTo?.resume(returning: .openNew)
        }
    }

    /// A connection could not be opened: its slot goes to the next waiter, if any.
    func openFailed() {
        state.withLock { $0.openFailed() }?.resume(returning: .openNew)
    }

    func close() {
        let (connections, waiting) = state.withLock { $0.close() }
        timer.withLock { $0 }?.cancel()
        for connection in connections { connection.close() }
        for waiter in waiting {
            waiter.resume(throwing: PostgresError(.poolClosed, message: "the connection pool is shut down"))
        }
    }
}
