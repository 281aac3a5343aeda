import ArgumentParser
import Foundation
import LedgerApp
import LedgerCore
import LedgerIdentity
import LedgerServer
import LedgerWorkers
import Logging

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

    @Flag(help: .hidden) var reportThreads = false

    func run() async throws {
        Ledger.bootstrapLogging()
        let logger = Logger(label: "ledger.purge")
        let configuration = try LedgerConfiguration.fromEnvironment()
        // With LEDGER_MASTER_KEY (loaded as `serve` loads it) requested deletions are scheduled too.
        let masterKey = try configuration.masterKey.map { _ in
            try MasterKeySource.load(configuration, allowDevelopmentKey: false, logger: logger)
        }
        let assembly: PurgeAssembly
        assembly = try await PurgeAssembly.build(
            configuration, url: try database.requiredURL(configuration), masterKey: masterKey, logger: logger)
        try await assembly.run { try await pass($0, logger: logger) }
        // Every resource it made has drained: say how many of their threads are left (tests).
        if reportThreads { print("pool threads left: \(PoolThreads.count())") }
    }

    /// One pass, a dry run, or the watch, over what `assembly` built.
    func pass(_ assembly: PurgeAssembly, logger: Logger) async throws {
        let worker = assembly.worker
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
        if !assembly.schedulesRequestedDeletions {
            // Never silently: these are deletions someone asked for, and only a pass with the key ends them.
            print(
                "requested deletions: not scheduled here (\(waiting) waiting): LEDGER_MASTER_KEY is not set, and scheduling one "
                    + "reads the account's holds and seals its events; set it, or leave them to `ledger serve`")
        }
        if watch {
            print("waiting for the purge lock, then a pass every \(interval) s (Ctrl-C stops)")
            try await assembly.watch(every: .seconds(interval), logger: logger)
            return
        }
        let lock = assembly.lock
        guard try await lock.tryAcquire() else {
            print("another process holds the purge lock (a `ledger serve` or `ledger purge --watch` leading) and purges; nothing done here")
            return
        }
        let started = Date()
        do {
            // The store runs meanwhile, as serve's does: its commits wake serve's feed followers.
            let count = try await assembly.store.whileRunning {
                try await worker.runOnce { index, accountID in print("purged \(index): \(accountID.lowercased)") }
            }
            print(String(format: "purged %d account(s) in %.1f s", count, Date().timeIntervalSince(started)))
        } catch {
            await lock.release()
            throw error
        }
        await lock.release()
    }
}
