import Foundation
import Synchronization

/// Admission to the hashing threads, by priority: a freed thread goes to a waiting sign-in (or
/// password re-auth) before any new password (sign-up, reset, change), and new passwords may
/// fill only part of the queue. So a flood of sign-ups from many addresses, each a full scrypt,
/// slows sign-ups, not the sign-ins of people who already have accounts. A full queue answers
/// at once (`PasswordHasherError.overloaded`, `503` with `Retry-After`) instead of piling up.
final class HashingQueue: Sendable {
    /// Who waits: someone signing in is served first.
    enum Priority: Int, Sendable, CaseIterable {
        case signIn = 0
        case newPassword = 1
    }

    private let state: Mutex<Admission<CheckedContinuation<Void, any Error>>>

    /// `threads` hashes at once; at most `queueLimit` waiting, of which at most
    /// `newPasswordLimit` new passwords.
    init(threads: Int, queueLimit: Int, newPasswordLimit: Int) {
        state = Mutex(Admission(threads: threads, queueLimit: queueLimit, newPasswordLimit: newPasswordLimit))
    }

    /// Waits for a thread; throws `overloaded` at once when the caller's share of the queue is full.
    func enter(_ priority: Priority) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            switch state.withLock({ $0.enter(priority, continuation) }) {
            case .run: continuation.resume()
            case .refuse: continuation.resume(throwing: PasswordHasherError.overloaded)
            case .wait: break
            }
        }
    }

    /// Whether `enter(priority)` would be admitted now (a hint: by the time it is called the
    /// answer may have changed). Lets a request that would be refused anyway be refused before
    /// it does any other work.
    func hasRoom(for priority: Priority) -> Bool {
        state.withLock { $0.hasRoom(for: priority) }
    }

    /// Hands the thread to the first waiter of the highest priority, or frees it.
    func leave() {
        state.withLock { $0.leave() }?.resume()
    }

    /// Hashes running and waiting, for tests and metrics.
    var load: (running: Int, waiting: [Int]) {
        state.withLock { ($0.running, $0.waiting.map(\.count)) }
    }

    /// The queue as a pure state machine over its waiters (continuations in the service, plain
    /// values in `HashingQueueTests`): each call says what the caller does next.
    struct Admission<Waiter> {
        /// What `enter` decided.
        enum Decision: Equatable { case run, wait, refuse }

        let threads: Int
        let queueLimit: Int
        let newPasswordLimit: Int
        private(set) var running = 0
        private(set) var waiting: [[Waiter]] = Priority.allCases.map { _ in [] }

        init(threads: Int, queueLimit: Int, newPasswordLimit: Int) {
            self.threads = threads
            self.queueLimit = queueLimit
            self.newPasswordLimit = newPasswordLimit
        }

        /// A hash of `priority` asks for a thread: it runs now, waits (`waiter` is queued),
        /// or is refused.
        mutating func enter(_ priority: Priority, _ waiter: Waiter) -> Decision {
            if running < threads {
                running += 1
                return .run
            }
            guard hasRoom(for: priority) else { return .refuse }
            waiting[priority.rawValue].append(waiter)
            return .wait
        }

        /// Whether `enter(priority)` would run or wait rather than be refused.
        func hasRoom(for priority: Priority) -> Bool {
            if running < threads { return true }
            let queued = waiting.reduce(0) { $0 + $1.count }
            return queued < queueLimit && (priority == .signIn || waiting[priority.rawValue].count < newPasswordLimit)
        }

        /// A hash ended: the waiter to resume (its thread handed over), or nil (the thread freed).
        mutating func leave() -> Waiter? {
            for index in waiting.indices where !waiting[index].isEmpty {
                return waiting[index].removeFirst()
            }
            running -= 1
            return nil
        }
    }
}
