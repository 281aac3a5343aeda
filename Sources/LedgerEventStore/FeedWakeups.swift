import Foundation
import LedgerCore
import LedgerPostgres
import Synchronization

/// Wakes feed followers when events commit: at once in this process, and through a
/// payload-less `NOTIFY ledger_events` for other processes.
///
/// NOTIFYs are coalesced — at most one per `notifyInterval`, covering every commit before it —
/// and sent outside the append's transaction: a NOTIFY inside it would serialize every commit
/// on PostgreSQL's notification queue lock, and one per append would double the round trips.
/// The sender is a job of the store's `run()` (`StoreJobs`): while the store does not run,
/// other processes' followers find its commits by their poll.
final class FeedWakeups: Sendable {
    static let channel = "ledger_events"
    /// How long a NOTIFY waits to gather further commits: the added cross-process latency.
    static let notifyInterval: Duration = .milliseconds(5)
    /// Waits ending this close to their deadline end with the one that fires: a follower woken a
    /// little early just looks again, and idle followers' staggered deadlines would otherwise
    /// fire the timer (and scan every waiter) once each.
    static let timeoutSlack: Duration = .milliseconds(50)

    private let client: PostgresClient
    private let jobs: StoreJobs
    private let state = Mutex(Wakeups<CheckedContinuation<Void, Never>>())
    /// Ends the waits whose timeout passed: one task for every follower, not one each. Set at
    /// the end of `init` (its task holds this weakly).
    private let timer = Mutex<DeadlineTimer?>(nil)

    init(client: PostgresClient, jobs: StoreJobs) {
        self.client = client
        self.jobs = jobs
        let timer = DeadlineTimer { [weak self] in self?.expireDue() }
        self.timer.withLock { $0 = timer }
    }

    deinit {
        timer.withLock { $0?.cancel() }
    }

    /// Bumped on every wake-up; a follower reads it before looking for events, then waits
    /// for it to change.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Events were committed by this process.
    func committed() {
        wakeLocal()
        if state.withLock({ $0.committed() }) == .send && !jobs.start(.notify) { state.withLock { $0.notifyRefused() } }
    }

    /// Wake followers here without telling other processes (for wake-ups that came from them).
    func wakeLocal() {
        for waiter in state.withLock({ $0.wake() }) { waiter.resume() }
    }

    /// Waits until the generation moves past `generation`, the timeout passes, or the task is cancelled.
    func wait(after generation: UInt64, timeout: Duration) async {
        let id = state.withLock { $0.nextID() }
        let deadline = ContinuousClock.now + timeout
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Cancelled before this registers: `onCancel` found nothing to resume.
                let registered = state.withLock {
                    $0.register(id, continuation, deadline: deadline, after: generation, cancelled: Task.isCancelled)
                }
                if registered { timer.withLock { $0 }?.schedule(deadline) } else { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.remove(id) }?.resume()
        }
    }

    /// Wakes the followers whose timeout passed; the earliest deadline of the rest.
    private func expireDue() -> ContinuousClock.Instant? {
        let (due, next) = state.withLock { $0.expire(now: ContinuousClock.now + Self.timeoutSlack) }
        for continuation in due { continuation.resume() }
        return next
    }

    /// Sends NOTIFYs until no commit asks for another: the `.notify` job.
    func sendNotifications() async {
        repeat {
            try? await Task.sleep(for: Self.notifyInterval)
            _ = try? await client.query("SELECT pg_notify('\(Self.channel)', '')")
        } while state.withLock({ $0.notified() })
    }

    /// The wake-ups as a pure state machine over the followers' waiters (continuations here,
    /// plain values in `FeedWakeupsTests`): each call returns what the caller then does.
    struct Wakeups<Waiter> {
        /// What a commit asks of the caller.
        enum Notify: Equatable { case send, alreadyUnderWay }

        private(set) var generation: UInt64 = 0
        private(set) var waiters: [UInt64: (waiter: Waiter, deadline: ContinuousClock.Instant)] = [:]
        private var lastID: UInt64 = 0
        private var notifyInFlight = false
        private var notifyAgain = false

        /// A number for a follower about to wait.
        mutating func nextID() -> UInt64 {
            lastID &+= 1
            return lastID
        }

        /// The follower `id` waits for a generation after `seen` until `deadline`: false when it
        /// must not wait (the generation moved, or its task is cancelled).
        mutating func register(
            _ id: UInt64, _ waiter: Waiter, deadline: ContinuousClock.Instant, after seen: UInt64, cancelled: Bool
        ) -> Bool {
            guard generation == seen, !cancelled else { return false }
            waiters[id] = (waiter, deadline)
            return true
        }

        /// The follower `id` stops waiting (cancelled): its waiter to resume, if still waiting.
        mutating func remove(_ id: UInt64) -> Waiter? {
            waiters.removeValue(forKey: id)?.waiter
        }

        /// A commit: the generation moves and every waiter is to be woken.
        mutating func wake() -> [Waiter] {
            generation &+= 1
            defer { waiters.removeAll() }
            return waiters.values.map(\.waiter)
        }

        /// The waiters due by `now`, and the earliest deadline of the rest.
        mutating func expire(now: ContinuousClock.Instant) -> (due: [Waiter], next: ContinuousClock.Instant?) {
            let due = waiters.filter { $0.value.deadline <= now }
            for id in due.keys { waiters.removeValue(forKey: id) }
            return (due.values.map(\.waiter), waiters.values.map(\.deadline).min())
        }

        /// This process committed: send a NOTIFY, or let the one under way send another after it.
        mutating func committed() -> Notify {
            if notifyInFlight {
                notifyAgain = true
                return .alreadyUnderWay
            }
            notifyInFlight = true
            return .send
        }

        /// The NOTIFY `committed()` asked for cannot be sent (the store does not run).
        mutating func notifyRefused() {
            notifyInFlight = false
            notifyAgain = false
        }

        /// A NOTIFY went out: true when commits since ask for another.
        mutating func notified() -> Bool {
            if notifyAgain {
                notifyAgain = false
                return true
            }
            notifyInFlight = false
            return false
        }
    }
}
