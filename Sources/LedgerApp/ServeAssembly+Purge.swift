import Foundation
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import LedgerServer
import LedgerWorkers
import Logging
import ServiceLifecycle

extension ServeAssembly {
    /// How long a due purge may wait before `serve --no-purge` warns about it at start.
    static let overduePurgeWarningAge: TimeInterval = 86_400

    /// The purge and the retention sweep as a member of serve's service group: ready to lead
    /// them (`PurgeLeadership`, elected by a PostgreSQL advisory lock on a connection of its
    /// own), or with `--no-purge` only reporting the backlog, after a warning when a purge is
    /// overdue, since then nothing here will ever do it.
    static func purgeService(
        _ configuration: LedgerConfiguration, purge: Bool, store: EventStore, services: LedgerServices, clock: any LedgerClock,
        logger: Logger
    ) async -> any Service {
        let retention = RetentionSweep(client: store.client, clock: clock, policy: configuration.retentionPolicy)
        let worker = PurgeWorker(store: store, clock: clock, retention: retention, accounts: services.accounts)
        let takeover = configuration.purgeTakeoverSeconds
        let lock = purge ? PurgeLeadership.lock(client: store.client, takeoverSeconds: takeover) : nil
        if !purge { await warnOfOverduePurges(worker, logger: logger) }
        return PurgeLeadership(
            worker: worker, lock: lock, interval: .seconds(configuration.purgeIntervalSeconds), takeover: .seconds(takeover),
            clock: clock, report: { [metrics = services.metrics] in metrics.recordPurge(leading: $0, oldestDueSeconds: $1) })
    }

    /// With `--no-purge`: a warning naming how many purges are overdue by more than a day and
    /// since when the oldest, since the retention promise ("removed within 30 days") then rests
    /// on another process that may not be running.
    static func warnOfOverduePurges(_ worker: PurgeWorker, logger: Logger) async {
        do {
            let (count, oldest) = try await worker.overdue(by: Self.overduePurgeWarningAge)
            guard count > 0, let oldest else { return }
            let warning =
                "purging is off here (--no-purge) and \(count) purge(s) are overdue by more than a day, the oldest due since "
                + "\(RFC3339.format(oldest)): run `ledger purge`, or serve without --no-purge on some instance"
            logger.warning("\(warning)")
        } catch {
            logger.warning("purging is off here (--no-purge), and the purge schedule cannot be read", metadata: ["error": "\(error)"])
        }
    }
}
