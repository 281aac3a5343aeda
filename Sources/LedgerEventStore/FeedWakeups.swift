import Foundation
import LedgerCore
import LedgerPostgres

/// Wakes feed followers when events commit: at once in this process, and through a
/// payload-less `NOTIFY ledger_events` for other processes.
///
/// NOTIFYs are coalesced — at most one per `notifyInterval`, covering every commit before it —
/// and sent outside the append's transaction: a NOTIFY inside it would serialize every commit
/// on PostgreSQL's notification queue lock, and one per append would double the round trips.
final class FeedWakeups: @unchecked Sendable {
    static let channel = "ledger_events"
    /// How long a NOTIFY waits to gather further commits: the added cross-process latency.
    static let notifyInterval: Duration = .milliseconds(5)

    private let client: PostgresClient
    private let lock = NSLock()
    private var generationCounter: UInt64 = 0
    private var waiters: [UInt64: (continuation: CheckedContinuation<Void, Never>, deadline: ContinuousClock.Instant)] = [:]
    private var nextWaiterID: UInt64 = 0
    /// Waits ending this close to their deadline end with the one that fires: a follower woken a
    /// little early just looks again, and idle followers' staggered deadlines would otherwise
    /// fire the timer (and scan every waiter) once each.
    static let timeoutSlack: Duration = .milliseconds(50)
    private var notifyInFlight = false
    private var notifyAgain = false
    /// Ends the waits whose timeout passed: one task for every follower, not one each.
    private var timer: DeadlineTimer!

    init(client: PostgresClient) {
        self.client = client
        self.timer = DeadlineTimer { [weak self] in self?.expireDue() }
    }

    /// Bumped on every wake-up; a follower reads it before looking for events, then waits
    /// for it to change.
    var generation: UInt64 { lock.withLock { generationCounter } }

    /// Events were committed by this process.
    func committed() {
        wakeLocal()
        let shouldSend: Bool = lock.withLock {
            if notifyInFlight {
                notifyAgain = true
                return false
            }
            notifyInFlight = true
            return true
        }
        if shouldSend { Task { await sendNotifications() } }
    }

    /// Wake followers here without telling other processes (for wake-ups that came from them).
    func wakeLocal() {
        let woken: [CheckedContinuation<Void, Never>] = lock.withLock {
            generationCounter &+= 1
            defer { waiters.removeAll() }
            return waiters.values.map(\.continuation)
        }
        for waiter in woken { waiter.resume() }
    }

    /// Waits until the generation moves past `generation`, the timeout passes, or the task is cancelled.
    func wait(after generation: UInt64, timeout: Duration) async {
        let id: UInt64 = lock.withLock {
            nextWaiterID &+= 1
            return nextWaiterID
        }
        let deadline = ContinuousClock.now + timeout
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let alreadyMoved: Bool = lock.withLock {
                    // Cancelled before this registers: `onCancel` found nothing to resume.
                    if generationCounter != generation || Task.isCancelled { return true }
                    waiters[id] = (continuation, deadline)
                    return false
                }
                if alreadyMoved { continuation.resume() } else { timer.schedule(deadline) }
            }
        } onCancel: {
            resume(id)
        }
    }

    private func resume(_ id: UInt64) {
        let waiter = lock.withLock { waiters.removeValue(forKey: id) }
        waiter?.continuation.resume()
    }

    /// Wakes the followers whose timeout passed; the earliest deadline of the rest.
    private func expireDue() -> ContinuousClock.Instant? {
        let (due, next): ([CheckedContinuation<Void, Never>], ContinuousClock.Instant?) = lock.withLock {
            let now = ContinuousClock.now + Self.timeoutSlack
            let due = waiters.filter { $0.value.deadline <= now }
            for id in due.keys { waiters.removeValue(forKey: id) }
            return (due.values.map(\.continuation), waiters.values.map(\.deadline).min())
        }
        for continuation in due { continuation.resume() }
        return next
    }

    private func sendNotifications() async {
        while true {
            try? await Task.sleep(for: Self.notifyInterval)
            _ = try? await client.query("SELECT pg_notify('\(Self.channel)', '')")
            let again: Bool = lock.withLock {
                if notifyAgain {
                    notifyAgain = false
                    return true
                }
                notifyInFlight = false
                return false
            }
            if !again { return }
        }
    }
}
