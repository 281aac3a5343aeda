import Foundation
import LedgerCore
import LedgerPostgres
import Logging
import ServiceLifecycle

/// Runs the purge and the retention sweep (`PurgeWorker`) every `interval` on exactly one of
/// the instances that share a database, chosen by `lock` (docs/architecture.md "Deletion").
///
/// Every instance runs this service and is ready to lead. The one whose `lock` holds leads:
/// it makes sure it still holds it before each pass and at least every `takeover / 2`, and
/// stops (or takes it again) when it does not. The others try for the lock every
/// `takeover / 2`, so when the leader dies, and PostgreSQL frees its lock, one of them leads
/// within `takeover`. A pass already under way when the lock goes finishes; a purge is safe to
/// run twice at once (`PurgeWorker` skips accounts another transaction holds), the lock only
/// keeps the instances from doing the same work side by side.
///
/// Without a lock (`serve --no-purge`) it never leads and only reports. Either way it reports,
/// each tick, whether it leads and how long the oldest due purge has waited (`/metrics`).
public struct PurgeLeadership: Sendable {
    /// The purge's advisory lock among the database's advisory locks (an arbitrary constant,
    /// like the migrations' `SchemaMigrator.lockKey`).
    public static let lockKey: Int64 = 0x4C45_4447_4552_5055  // "LEDGERPU"

    /// The purge's lock for `client`: a session advisory lock on a connection of its own (see
    /// `SessionAdvisoryLock`), whose peer PostgreSQL drops, with the lock, within about
    /// `takeoverSeconds` when it goes silent (keepalives after a third of it, probes a sixth apart).
    /// Every process that purges takes this one: `serve` and `ledger purge`, one at a time.
    public static func lock(client: PostgresClient, takeoverSeconds: Int) -> SessionAdvisoryLock {
        SessionAdvisoryLock(
            client: client, key: lockKey, keepaliveSeconds: (idle: max(1, takeoverSeconds / 3), interval: max(1, takeoverSeconds / 6)))
    }

    /// Where a run stands between two ticks.
    struct State {
        var leading = false
        /// When the last pass began (nil: none yet under this leadership).
        var lastPass: ContinuousClock.Instant?
    }

    let lock: (any LeadershipLock)?
    let interval: Duration
    let takeover: Duration
    let clock: any LedgerClock
    let logger: Logger
    /// The purge and the retention sweep, once.
    let pass: @Sendable () async throws -> Void
    /// When the longest-waiting due purge became due; nil when none is due.
    let oldestDue: @Sendable () async throws -> Date?
    /// Told after each tick whether this instance leads and the oldest due purge's age in
    /// seconds (nil when it could not be read).
    let report: @Sendable (_ leading: Bool, _ oldestDueSeconds: Double?) -> Void

    /// `lock` nil: this instance leaves the purge to others and only reports.
    public init(
        worker: PurgeWorker, lock: (any LeadershipLock)?, interval: Duration, takeover: Duration, clock: any LedgerClock,
        logger: Logger = Logger(label: "ledger.purge"),
        report: @escaping @Sendable (_ leading: Bool, _ oldestDueSeconds: Double?) -> Void = { _, _ in }
    ) {
        self.init(
            lock: lock, interval: interval, takeover: takeover, clock: clock, logger: logger,
            pass: {
                let purged = try await worker.runOnce()
                if purged > 0 { worker.logger.info("purged accounts", metadata: ["count": "\(purged)"]) }
            },
            oldestDue: { try await worker.oldestDue() }, report: report)
    }

    init(
        lock: (any LeadershipLock)?, interval: Duration, takeover: Duration, clock: any LedgerClock, logger: Logger,
        pass: @escaping @Sendable () async throws -> Void, oldestDue: @escaping @Sendable () async throws -> Date?,
        report: @escaping @Sendable (_ leading: Bool, _ oldestDueSeconds: Double?) -> Void
    ) {
        self.lock = lock
        self.interval = interval
        self.takeover = takeover
        self.clock = clock
        self.logger = logger
        self.pass = pass
        self.oldestDue = oldestDue
        self.report = report
    }

    /// How often a follower tries for the lock and a leader makes sure it still holds it: half
    /// the takeover bound, which leaves the other half for the try itself and PostgreSQL
    /// noticing a dead leader's socket.
    var checkPeriod: Duration { takeover / 2 }

    /// One step: keep, lose or take the lead, pass when leading and a pass is due, report.
    /// Returns when the next step is due.
    func tick(_ state: inout State, now: ContinuousClock.Instant) async -> ContinuousClock.Instant {
        guard let lock else {
            await reportStatus(leading: false)
            return now + interval
        }
        if state.leading {
            do {
                state.leading = try await lock.isHeld()
                if !state.leading { logger.warning("purge lock no longer held here; trying to take it again") }
            } catch {
                state.leading = false
                logger.warning("purge lock connection lost; trying to take the lock again", metadata: ["error": "\(error)"])
            }
        }
        if !state.leading {
            do {
                if try await lock.tryAcquire() {
                    state.leading = true
                    state.lastPass = nil
                    logger.notice("this instance now runs the purge and the retention sweep (it holds the purge lock)")
                }
            } catch {
                logger.warning("cannot try the purge lock", metadata: ["error": "\(error)"])
            }
        }
        if state.leading, state.lastPass.map({ now - $0 >= interval }) ?? true {
            state.lastPass = now
            do {
                try await pass()
            } catch is CancellationError {
                // Shutting down mid-pass: what was purged stays purged, the rest waits for the next leader.
            } catch {
                logger.warning("purge pass failed", metadata: ["error": "\(error)"])
            }
        }
        await reportStatus(leading: state.leading)
        let check = now + checkPeriod
        guard state.leading, let lastPass = state.lastPass else { return check }
        return min(check, lastPass + interval)
    }

    private func reportStatus(leading: Bool) async {
        do {
            let oldest = try await oldestDue()
            report(leading, oldest.map { max(0, clock.now().timeIntervalSince($0)) } ?? 0)
        } catch {
            report(leading, nil)
            logger.warning("cannot read the purge schedule", metadata: ["error": "\(error)"])
        }
    }

    /// Ticks until cancelled, then gives the lock up so another instance leads at once.
    func run(clock continuous: ContinuousClock = ContinuousClock()) async {
        var state = State()
        while !Task.isCancelled {
            let next = await tick(&state, now: continuous.now)
            try? await Task.sleep(until: next, clock: continuous)
        }
        await lock?.release()
        if state.leading { logger.notice("purge lock released at shutdown") }
        report(false, nil)
    }
}

extension PurgeLeadership: Service {
    /// Runs with the service group until its graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown { await run(clock: ContinuousClock()) }
    }
}
