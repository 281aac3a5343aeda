import Foundation
import LedgerCore
import LedgerIdentity
import Synchronization

/// A session and when it was used.
public struct SessionUse: Sendable, Equatable {
    public let session: SessionRef
    public let usedAt: Date

    public init(session: SessionRef, usedAt: Date) {
        self.session = session
        self.usedAt = usedAt
    }
}

/// Moves a session's `last_used_at` when it is used, beside the request rather than in its
/// path: at most one write a minute per session and instance (the write itself skips a
/// session another instance moved within the minute). Operational data, not an event.
///
/// A use only notes the session; `settle` writes what is noted. The service runs it on a beat
/// (`SessionActivityWriter`) and once more at shutdown, so no request starts a task of its own.
public final class SessionActivity: Sendable {
    let repository: any AccountRepository
    let clock: any LedgerClock
    let interval: TimeInterval
    /// When each session's use was last noted, and the uses not yet written.
    private let noted = Mutex<(lastWrites: [UUID: Date], pending: [UUID: SessionUse])>(([:], [:]))
    /// Sessions remembered per instance before the old entries are dropped.
    static let capacity = 100_000
    /// Uses written by one statement at most.
    static let batchSize = 1000

    public init(repository: any AccountRepository, clock: any LedgerClock, interval: TimeInterval) {
        self.repository = repository
        self.clock = clock
        self.interval = interval
    }

    /// The session was used now.
    public func used(_ session: SessionRef) {
        let now = clock.now()
        noted.withLock { noted in
            if let last = noted.lastWrites[session.sessionID], now.timeIntervalSince(last) < interval { return }
            if noted.lastWrites.count >= Self.capacity {
                noted.lastWrites = noted.lastWrites.filter { now.timeIntervalSince($0.value) < interval }
                // Still nearly full (that many sessions within the minute): forget them all rather
                // than copy the table again on the next one. A write too many is harmless: the
                // UPDATE skips a session moved within the minute.
                if noted.lastWrites.count > Self.capacity * 3 / 4 { noted.lastWrites.removeAll(keepingCapacity: true) }
            }
            noted.lastWrites[session.sessionID] = now
            // Bounded like `lastWrites`: past it a use goes unrecorded until the next beat, which
            // costs only a `last_used_at` a minute late.
            guard noted.pending.count < Self.capacity else { return }
            noted.pending[session.sessionID] = SessionUse(session: session, usedAt: now)
        }
    }

    /// Writes the uses noted so far (the writer's beat, a clean shutdown, and tests).
    public func settle() async {
        let due = noted.withLock { noted in
            defer { noted.pending.removeAll(keepingCapacity: true) }
            return Array(noted.pending.values)
        }
        // One statement a batch, not a transaction a session: a million sessions used a minute
        // would otherwise be ~17,000 writes a second through this one writer.
        var start = 0
        while start < due.count {
            let batch = Array(due[start..<min(start + Self.batchSize, due.count)])
            _ = try? await repository.touch(batch, interval: interval)
            start += Self.batchSize
        }
    }
}
