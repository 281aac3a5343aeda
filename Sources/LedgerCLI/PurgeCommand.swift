import ArgumentParser
import Foundation
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerServer
import LedgerWorkers

/// `ledger purge`: purges every deleted account whose purge is due, then exits (`--watch`: keeps
/// going). Several at once are safe.
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge", abstract: "Purge deleted accounts whose retention has ended.")

    @OptionGroup var database: DatabaseOptions

    @Flag(help: "List what is due without purging it.")
    var dryRun = false

    @Flag(help: "Keep running, a pass every --interval seconds.")
    var watch = false

    @Option(help: "Seconds between passes with --watch.")
    var interval = 60

    func run() async throws {
        Ledger.bootstrapLogging()
        let configuration = try LedgerConfiguration.fromEnvironment()
        try await database.withClient(configuration, maximumConnections: 2) { client in
            // A purge opens no payload: it appends an unencrypted event and destroys keys, so any master key will do.
            let store = EventStore(client: client, keyring: SubjectKeyring(masterKey: try MasterKey.generate()))
            let worker = PurgeWorker(
                store: store, clock: SystemClock(),
                retention: RetentionSweep(client: client, clock: SystemClock(), policy: configuration.retentionPolicy))
            if dryRun {
                let due = try await worker.due()
                for (accountID, purgeAfter) in due { print("due \(accountID.lowercased) since \(RFC3339.format(purgeAfter))") }
                print("\(due.count) account(s) due; nothing purged (dry run)")
                return
            }
            repeat {
                let started = Date()
                let count = try await worker.runOnce { index, accountID in print("purged \(index): \(accountID.lowercased)") }
                print(String(format: "purged %d account(s) in %.1f s", count, Date().timeIntervalSince(started)))
                if watch { try await Task.sleep(for: .seconds(interval)) }
            } while watch && !Task.isCancelled
        }
    }
}
