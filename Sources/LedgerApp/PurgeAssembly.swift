import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import LedgerWorkers
import Logging
import ServiceLifecycle

/// Everything `ledger purge` runs, built in one place as `ServeAssembly` builds serve's: on a
/// `StoreAssembly` (a small pool on the database and the store), the accounts that schedule requested deletions (when
/// the master key is given), the purge worker and serve's purge lock. Every resource it makes is
/// listed with its shutdown (`resources`), so a pass or a watch ends with none left running.
public struct PurgeAssembly: Sendable {
    public let worker: PurgeWorker
    /// The store the worker appends through: a pass runs it (`store.whileRunning`), a watch
    /// lists it in its service group.
    public let store: EventStore
    /// Serve's purge lock (`PurgeLeadership.lock`): one process purges at a time.
    public let lock: SessionAdvisoryLock
    /// Whether requested deletions are scheduled here (the master key was given).
    public let schedulesRequestedDeletions: Bool
    /// What it made, each draining when shut down: the database last.
    public let resources: [any DrainingService]
    /// How soon a watcher takes the lock over from a leader gone silent.
    let takeover: Duration

    /// Builds it on `url`. With `masterKey` (checked against the store's, as serve checks it:
    /// `ConfigurationError` when it differs) the accounts schedule requested deletions; without
    /// it the store seals under a throwaway key, since a purge opens no payload (it appends an
    /// unencrypted event and destroys keys).
    public static func build(
        _ configuration: LedgerConfiguration, url: String, masterKey: MasterKey?, clock: any LedgerClock = SystemClock(),
        logger: Logger
    ) async throws -> PurgeAssembly {
        // Scheduling a deletion appends through the store's group commit beside the purge's
        // own transaction: room for both.
        let base = StoreAssembly(url: url, connections: 4, masterKey: try masterKey ?? MasterKey.generate(), clock: clock)
        let retentionSweep = RetentionSweep(client: base.client, clock: clock, policy: configuration.retentionPolicy)
        let lock = PurgeLeadership.lock(client: base.client, takeoverSeconds: configuration.purgeTakeoverSeconds)
        let takeover = Duration.seconds(configuration.purgeTakeoverSeconds)
        guard let masterKey else {
            let worker = PurgeWorker(store: base.store, clock: clock, logger: logger, retention: retentionSweep, accounts: nil)
            return PurgeAssembly(
                worker: worker, store: base.store, lock: lock, schedulesRequestedDeletions: false, resources: base.resources.resources,
                takeover: takeover)
        }
        do {
            try await SubjectKeyring(masterKey: masterKey).checkMasterKey(client: base.client)
        } catch let error as EventStoreError {
            await base.resources.shutdown()
            throw ConfigurationError(
                "refusing to purge: \(error.message); set LEDGER_MASTER_KEY to the store's key (or unset it to purge without "
                    + "scheduling requested deletions)")
        } catch {
            await base.resources.shutdown()
            throw error
        }
        // No password is checked here, but the accounts' environment holds a hasher: one thread.
        let accounts = try base.accounts(
            policies: configuration.policies, retention: configuration.retention(masterKey: masterKey), clock: clock, hashingThreads: 1)
        let worker = PurgeWorker(store: base.store, clock: clock, logger: logger, retention: retentionSweep, accounts: accounts)
        return PurgeAssembly(
            worker: worker, store: base.store, lock: lock, schedulesRequestedDeletions: true, resources: base.resources.resources,
            takeover: takeover)
    }

    /// Runs `body`, then shuts every resource down, last made first, whether it returned or threw.
    public func run<T: Sendable>(_ body: (PurgeAssembly) async throws -> T) async throws -> T {
        do {
            let value = try await body(self)
            await shutdown()
            return value
        } catch {
            await shutdown()
            throw error
        }
    }

    /// Shuts every resource down, last made first.
    public func shutdown() async {
        for resource in resources.reversed() { await resource.shutdown() }
    }

    /// `--watch`: waits for the purge lock, then a pass every `interval`, until SIGTERM or
    /// SIGINT; the resources drain after the leadership has stopped.
    public func watch(every interval: Duration, clock: any LedgerClock = SystemClock(), logger: Logger) async throws {
        let leadership = PurgeLeadership(worker: worker, lock: lock, interval: interval, takeover: takeover, clock: clock, logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: resources.map { $0 as any Service } + [store, leadership], gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}
