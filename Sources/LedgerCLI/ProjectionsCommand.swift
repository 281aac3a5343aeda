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
import Synchronization

/// `ledger projections rebuild`: replays the account streams into fresh projections beside the
/// live ones and swaps them in, while the service runs.
struct ProjectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections", abstract: "Manage projections.", subcommands: [Rebuild.self])

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rebuild the account projections from the events beside the live ones, then swap them in (the service keeps running)."
        )
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            Ledger.bootstrapLogging()
            let configuration = try LedgerConfiguration.fromEnvironment()
            try await database.withStore(configuration) { store in
                let started = ContinuousClock.now
                let bar = ProgressBar(label: "rebuild")
                let last = LastProgress()
                // What the retention sweep deleted stays deleted.
                let expiry = configuration.retentionPolicy.projectionExpiry(at: Date())
                let accounts = try await AccountProjections.rebuild(store: store, expiry: expiry) { progress in
                    last.value = progress
                    bar.update(done: progress.streamsDone, total: progress.streamsTotal, detail: "streams, \(progress.events) events")
                }
                bar.finish()
                let elapsed = ContinuousClock.now - started
                let seconds = max(elapsed.inSeconds, 1e-6)
                let summary = last.value
                print(
                    String(
                        format: "rebuilt %d stream(s) (%d account(s)) from %d event(s) in %.2f s: %.0f events/s",
                        summary.streamsDone, accounts, summary.events, seconds, Double(summary.events) / seconds))
                let held = summary.lockHeld.map { $0.inMilliseconds } ?? 0
                print(
                    String(
                        format: "caught up %d changed stream(s) in %d round(s); swapped in holding the tables %.1f ms (%d retr%@)",
                        summary.streamsCaughtUp, summary.catchUpRounds, held, summary.swapRetries, summary.swapRetries == 1 ? "y" : "ies"))
                if let kept = summary.expiry {
                    let (made, expired) = (RFC3339.format(kept.otpRequestsMadeBefore), RFC3339.format(kept.emailLinksExpiredBefore))
                    print(
                        "left out, as the retention sweep deletes them: code requests made before \(made), "
                            + "email links expired before \(expired)")
                }
            }
        }
    }
}

/// The last progress a rebuild reported, for its summary line.
private final class LastProgress: Sendable {
    private let stored = Mutex(AccountProjections.Progress())
    var value: AccountProjections.Progress {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
