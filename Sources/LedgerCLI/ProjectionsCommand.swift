import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer

/// `ledger projections rebuild`: replays the account streams into fresh projections.
struct ProjectionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "projections", abstract: "Manage projections.", subcommands: [Rebuild.self])

    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Throw the account projections away and rebuild them from the events (one transaction).")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            Ledger.bootstrapLogging()
            let configuration = try LedgerConfiguration.fromEnvironment()
            guard let masterKey = configuration.masterKey else {
                throw ValidationError("set LEDGER_MASTER_KEY: payloads must be opened to rebuild")
            }
            try await database.withClient(configuration, maximumConnections: 2) { client in
                let store = EventStore(client: client, keyring: SubjectKeyring(masterKey: try MasterKey(base64: masterKey)))
                let started = ContinuousClock.now
                let accounts = try await AccountProjections.rebuild(store: store)
                print("rebuilt the projections of \(accounts) account(s) in \(ContinuousClock.now - started)")
            }
        }
    }
}
