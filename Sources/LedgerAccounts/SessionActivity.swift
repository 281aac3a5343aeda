import Foundation
import LedgerCore
import LedgerIdentity

/// Moves a session's `last_used_at` when it is used, beside the request rather than in its
/// path: at most one write a minute per session and instance (the write itself skips a
/// session another instance moved within the minute). Operational data, not an event.
///
/// A use only notes the session; `settle` writes what is noted. The service runs it on a beat
/// (`SessionActivityWriter`) and once more at shutdown, so no request starts a task of its own.
public final class SessionActivity: @unchecked Sendable {
    let repository: any AccountRepository
    let clock: any LedgerClock
    let interval: TimeInterval
    private let lock = NSLock()
    private var lastWrites: [UUID: Date] = [:]
    private var pending: [UUID: (session: SessionRef, usedAt: Date)] = [:]
    /// Sessions remembered per instance before the old entries are dropped.
    static let capacity = 100_000

    public init(repository: any AccountRepository, clock: any LedgerClock, interval: TimeInterval) {
        self.repository = repository
        self.clock = clock
        self.interval = interval
    }

    /// The session was used now.
    public func used(_ session: SessionRef) {
        let now = clock.now()
        lock.withLock {
            if let last = lastWrites[session.sessionID], now.timeIntervalSince(last) < interval { return }
            if lastWrites.count >= Self.capacity {
                lastWrites = lastWrites.filter { now.timeIntervalSince($0.value) < interval }
                // Still nearly full (that many sessions within the minute): forget them all rather
                // than copy the table again on the next one. A write too many is harmless: the
                // UPDATE skips a session moved within the minute.
                if lastWrites.count > Self.capacity * 3 / 4 { lastWrites.removeAll(keepingCapacity: true) }
            }
            lastWrites[session.sessionID] = now
            pending[session.sessionID] = (session, now)
        }
    }

    /// Writes the uses noted so far (the writer's beat, a clean shutdown, and tests).
    public func settle() async {
        let due = lock.withLock {
            defer { pending.removeAll(keepingCapacity: true) }
            return Array(pending.values)
        }
        for use in due { _ = try? await repository.touch(use.session, at: use.usedAt, interval: interval) }
    }
}
