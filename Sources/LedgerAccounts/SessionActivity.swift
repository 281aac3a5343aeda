import Foundation
import LedgerCore
import LedgerIdentity

/// Moves a session's `last_used_at` when it is used, beside the request rather than in its
/// path: at most one write a minute per session and instance (the write itself skips a
/// session another instance moved within the minute). Operational data, not an event.
public final class SessionActivity: @unchecked Sendable {
    let repository: any AccountRepository
    let clock: any LedgerClock
    let interval: TimeInterval
    private let lock = NSLock()
    private var lastWrites: [UUID: Date] = [:]
    private var inFlight: [UUID: Task<Void, Never>] = [:]
    /// Sessions remembered per instance before the old entries are dropped.
    static let capacity = 100_000

    public init(repository: any AccountRepository, clock: any LedgerClock, interval: TimeInterval = Policies.standard.sessionTouchInterval)
    {
        self.repository = repository
        self.clock = clock
        self.interval = interval
    }

    /// The session was used now.
    public func used(_ session: SessionRef) {
        let now = clock.now()
        let due: Bool = lock.withLock {
            if let last = lastWrites[session.sessionID], now.timeIntervalSince(last) < interval { return false }
            if lastWrites.count >= Self.capacity { lastWrites = lastWrites.filter { now.timeIntervalSince($0.value) < interval } }
            lastWrites[session.sessionID] = now
            return true
        }
        guard due else { return }
        let writeID = UUID.random()
        // Made under the lock: the write's own removal (which takes the lock) cannot come first.
        lock.withLock {
            inFlight[writeID] = Task<Void, Never> { [repository, interval] in
                _ = try? await repository.touch(session, at: now, interval: interval)
                _ = self.lock.withLock { self.inFlight.removeValue(forKey: writeID) }
            }
        }
    }

    /// Waits for the writes started so far (tests, and a clean shutdown).
    public func settle() async {
        for task in lock.withLock({ Array(inFlight.values) }) { await task.value }
    }
}
