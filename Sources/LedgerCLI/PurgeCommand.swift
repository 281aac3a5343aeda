import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import LedgerServer
import LedgerWorkers
import Logging
import ServiceLifecycle

/// `ledger purge`: one pass of what `serve` runs in the background (docs/architecture.md
/// "Deletion"), then exits (`--watch`: keeps going): schedules the deletions holds blocked
/// once none does (this needs `LEDGER_MASTER_KEY`), purges every deleted account whose purge is
/// due, and sweeps what outlived its use. It takes the purge lock `serve` takes
/// (`PurgeLeadership`): one process purges at a time. A pass finds the lock held and leaves the
/// work to its holder; `--watch` waits, ready to lead, as an instance of `serve` does.
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Purge deleted accounts whose retention has ended, and sweep what outlived its use.",
        discussion: """
            Does what `ledger serve` does in its purge passes: schedules the deletions Apple asked for that holds \
            blocked once none does, purges every deleted account whose purge is due, and runs the retention sweep. \
            Scheduling needs LEDGER_MASTER_KEY (it reads the account and seals its events); without it the command \
            says so and does the rest.
            """)

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "List what is due without purging or scheduling anything.")
    var dryRun = false

    @Flag(help: "Keep running, a pass every --interval seconds, while this process holds the purge lock (it waits for it).")
    var watch = false

    @Option(help: "Seconds between passes with --watch (at least 1).")
    var interval = 60

    func validate() throws {
        guard interval >= 1 else { throw ValidationError("--interval must be at least 1 second") }
    }

    func run() async throws {
        Ledger.bootstrapLogging()
        let logger = Logger(label: "ledger.purge")
        let configuration = try LedgerConfiguration.fromEnvironment()
        // Scheduling a deletion appends through the store's group commit beside the purge's
        // own transaction: room for both.
        try await database.withClient(configuration, maximumConnections: 4) { client in
            let clock = SystemClock()
            let (store, accounts) = try await Self.store(configuration, client: client, clock: clock, logger: logger)
            let worker = PurgeWorker(
                store: store, clock: clock, logger: logger,
                retention: RetentionSweep(client: client, clock: clock, policy: configuration.retentionPolicy), accounts: accounts)
            let waiting = try await worker.requestedDeletionsWaiting()
            if dryRun {
                let due = try await worker.due()
                for (accountID, purgeAfter) in due { print("due \(accountID.lowercased) since \(RFC3339.format(purgeAfter))") }
                if waiting > 0 {
                    print("\(waiting) requested deletion(s) waiting for their holds (a pass schedules each once none blocks it)")
                }
                print("\(due.count) account(s) due; nothing purged (dry run)")
                return
            }
            if accounts == nil {
                // Never silently: these are deletions someone asked for, and only a pass with the key ends them.
                print(
                    "requested deletions: not scheduled here (\(waiting) waiting): LEDGER_MASTER_KEY is not set, and scheduling one "
                        + "reads the account's holds and seals its events; set it, or leave them to `ledger serve`")
            }
            let lock = PurgeLeadership.lock(client: client, takeoverSeconds: configuration.purgeTakeoverSeconds)
            if watch {
                let leadership = PurgeLeadership(
                    worker: worker, lock: lock, interval: .seconds(interval), takeover: .seconds(configuration.purgeTakeoverSeconds),
                    clock: clock, logger: logger)
                print("waiting for the purge lock, then a pass every \(interval) s (Ctrl-C stops)")
                let group = ServiceGroup(
                    configuration: .init(services: [leadership], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
                try await group.run()
                return
            }
            guard try await lock.tryAcquire() else {
                print(
                    "another process holds the purge lock (a `ledger serve` or `ledger purge --watch` leading) and purges; nothing done here"
                )
                return
            }
            let started = Date()
            do {
                let count = try await worker.runOnce { index, accountID in print("purged \(index): \(accountID.lowercased)") }
                print(String(format: "purged %d account(s) in %.1f s", count, Date().timeIntervalSince(started)))
            } catch {
                await lock.release()
                throw error
            }
            await lock.release()
        }
    }

    /// The store the purge writes through, and the accounts that schedule requested deletions.
    ///
    /// With `LEDGER_MASTER_KEY` (loaded as `serve` loads it, and refused, as there, when the
    /// store's data keys are wrapped by another) both; without it, no accounts, and a store
    /// under a throwaway key: a purge opens no payload (it appends an unencrypted event and
    /// destroys keys), so any master key will do for it.
    static func store(
        _ configuration: LedgerConfiguration, client: PostgresClient, clock: any LedgerClock, logger: Logger
    ) async throws -> (EventStore, AccountService?) {
        guard configuration.masterKey != nil else {
            return (EventStore(client: client, keyring: SubjectKeyring(masterKey: try MasterKey.generate()), clock: clock), nil)
        }
        let masterKey = try MasterKeySource.load(configuration, allowDevelopmentKey: false, logger: logger)
        let keyring = SubjectKeyring(masterKey: masterKey)
        do {
            try await keyring.checkMasterKey(client: client)
        } catch let error as EventStoreError {
            throw ValidationError(
                "refusing to purge: \(error.message); set LEDGER_MASTER_KEY to the store's key (or unset it to purge without "
                    + "scheduling requested deletions)")
        }
        let store = EventStore(client: client, keyring: keyring, clock: clock)
        let retention = configuration.retention(masterKey: masterKey)
        // The hasher is never used here (no password is checked), but the service needs one.
        let accounts = AccountService(
            environment: .postgres(
                store: store, clock: clock, policies: configuration.policies, retention: retention,
                hasher: try PasswordHasher(parameters: Scrypt(logN: configuration.policies.scryptLogN), maximumConcurrent: 1)))
        return (store, accounts)
    }
}
