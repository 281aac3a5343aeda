import Foundation

extension ConnectionPool {
    /// The pool's bookkeeping as a pure state machine over its connections and waiters (the
    /// pool's own, or plain values in `ConnectionPoolStateTests`): each call changes the lists
    /// and says what the caller does next, outside the lock (resume a waiter, close a
    /// connection, open one).
    struct State<Connection, Waiter> {
        /// What a checkout gets without waiting.
        enum Immediate {
            case idle(Connection)
            /// A free slot: the caller opens a connection.
            case openNew
            /// Every connection is busy: the caller waits (`enqueue`).
            case wait
            case closed
        }

        /// What a returned connection does.
        enum Released {
            /// Kept idle.
            case kept
            /// Handed to the oldest waiter.
            case handedTo(Waiter)
            /// Closed (broken, or the pool is closed); its slot went to `waiter`, who opens a
            /// new connection, when one waited.
            case close(slotTo: Waiter?)
        }

        let maximum: Int
        let maximumWaiters: Int
        private(set) var idle: [Connection] = []
        private(set) var open = 0
        private(set) var closed = false
        /// FIFO: `waiters[waitersHead...]` are waiting, oldest first (a head index, so taking the
        /// oldest does not move the rest).
        private var waiters: [(waiter: Waiter, deadline: ContinuousClock.Instant?)] = []
        private var waitersHead = 0

        init(maximum: Int, maximumWaiters: Int) {
            self.maximum = max(1, maximum)
            self.maximumWaiters = max(0, maximumWaiters)
        }

        /// Callers waiting now.
        var waiting: Int { waiters.count - waitersHead }

        /// An idle connection, else a free slot.
        mutating func acquire() -> Immediate {
            guard !closed else { return .closed }
            if let connection = idle.popLast() { return .idle(connection) }
            guard open < maximum else { return .wait }
            open += 1
            return .openNew
        }

        /// Queues `waiter` until `deadline`; false when the queue is full.
        mutating func enqueue(_ waiter: Waiter, deadline: ContinuousClock.Instant?) -> Bool {
            guard waiting < maximumWaiters else { return false }
            waiters.append((waiter, deadline))
            return true
        }

        /// Takes the waiters whose deadline has passed by `now`; returns them and the oldest
        /// remaining one's deadline. Deadlines are in queue order (one timeout for all), so only
        /// the head is looked at.
        mutating func expire(now: ContinuousClock.Instant) -> (expired: [Waiter], next: ContinuousClock.Instant?) {
            var expired: [Waiter] = []
            while waitersHead < waiters.count, let deadline = waiters[waitersHead].deadline, deadline <= now {
                expired.append(popOldest())
            }
            return (expired, waitersHead < waiters.count ? waiters[waitersHead].deadline : nil)
        }

        /// A connection comes back, `healthy` or not.
        mutating func release(_ connection: Connection, healthy: Bool) -> Released {
            if healthy && !closed {
                if waiting > 0 { return .handedTo(popOldest()) }
                idle.append(connection)
                return .kept
            }
            open -= 1
            return .close(slotTo: handSlotOn())
        }

        /// A connection could not be opened: its slot goes to the waiter returned, if any.
        mutating func openFailed() -> Waiter? {
            open -= 1
            return handSlotOn()
        }

        /// Closes the pool: the idle connections to close and the waiters to fail.
        mutating func close() -> (idle: [Connection], waiters: [Waiter]) {
            closed = true
            let connections = idle
            open -= idle.count
            idle.removeAll()
            let waiting = waiters[waitersHead...].map(\.waiter)
            waiters.removeAll()
            waitersHead = 0
            return (connections, waiting)
        }

        private mutating func handSlotOn() -> Waiter? {
            guard waiting > 0, open < maximum else { return nil }
            open += 1
            return popOldest()
        }

        private mutating func popOldest() -> Waiter {
            let waiter = waiters[waitersHead].waiter
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
    }
}
