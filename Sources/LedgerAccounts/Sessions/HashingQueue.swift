import Foundation

/// Admission to the hashing threads, by priority: a freed thread goes to a waiting sign-in (or
/// password re-auth) before any new password (sign-up, reset, change), and new passwords may
/// fill only part of the queue. So a flood of sign-ups from many addresses, each a full scrypt,
/// slows sign-ups, not the sign-ins of people who already have accounts. A full queue answers
/// at once (`PasswordHasherError.overloaded`, `503` with `Retry-After`) instead of piling up.
final class HashingQueue: @unchecked Sendable {
    /// Who waits: someone signing in is served first.
    enum Priority: Int, Sendable, CaseIterable {
        case signIn = 0
        case newPassword = 1
    }

    private let lock = NSLock()
    private let threads: Int
    private let queueLimit: Int
    private let newPasswordLimit: Int
    private var running = 0
    private var waiting: [[CheckedContinuation<Void, any Error>]] = Priority.allCases.map { _ in [] }

    /// `threads` hashes at once; at most `queueLimit` waiting, of which at most
    /// `newPasswordLimit` new passwords.
    init(threads: Int, queueLimit: Int, newPasswordLimit: Int) {
        self.threads = threads
        self.queueLimit = queueLimit
        self.newPasswordLimit = newPasswordLimit
    }

    /// Waits for a thread; throws `overloaded` at once when the caller's share of the queue is full.
    func enter(_ priority: Priority) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            enum Decision { case run, wait, refuse }
            let decision: Decision = lock.withLock {
                if running < threads {
                    running += 1
                    return .run
                }
                let queued = waiting.reduce(0) { $0 + $1.count }
                let share = priority == .newPassword ? waiting[priority.rawValue].count < newPasswordLimit : true
                guard queued < queueLimit, share else { return .refuse }
                waiting[priority.rawValue].append(continuation)
                return .wait
            }
            switch decision {
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
        lock.withLock {
            if running < threads { return true }
            let queued = waiting.reduce(0) { $0 + $1.count }
            return queued < queueLimit && (priority == .signIn || waiting[priority.rawValue].count < newPasswordLimit)
        }
    }

    /// Hands the thread to the first waiter of the highest priority, or frees it.
    func leave() {
        let next: CheckedContinuation<Void, any Error>? = lock.withLock {
            for index in waiting.indices where !waiting[index].isEmpty {
                return waiting[index].removeFirst()
            }
            running -= 1
            return nil
        }
        next?.resume()
    }

    /// Hashes running and waiting, for tests and metrics.
    var load: (running: Int, waiting: [Int]) {
        lock.withLock { (running, waiting.map(\.count)) }
    }
}
