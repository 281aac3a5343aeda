import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerApp
import LedgerCore
import LedgerIdentity
import LedgerServer
import Logging

/// `ledger signing-keys rotate|list`: the keys that sign JWT access tokens (docs/tokens.md).
struct SigningKeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signing-keys", abstract: "Manage the keys that sign JWT access tokens.", subcommands: [Rotate.self, List.self])

    static func withKeys<T>(_ database: DatabaseOptions, _ body: (SigningKeys) async throws -> T) async throws -> T {
        Ledger.bootstrapLogging()
        let configuration = try LedgerConfiguration.fromEnvironment()
        let masterKey = try MasterKeySource.load(configuration, allowDevelopmentKey: false, logger: Logger(label: "ledger.signing-keys"))
        return try await database.withClient(configuration) { client in
            try await body(configuration.signingKeys(client: client, masterKey: masterKey, clock: SystemClock()))
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new key: published at once, signing after LEDGER_SIGNING_KEY_ACTIVATION_SECONDS (at once if it is the first)."
        )
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let key = try await SigningKeysCommand.withKeys(database) { try await $0.rotate() }
            print("made key \(key.kid), signing from \(RFC3339.format(key.activatesAt))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the keys: kid, state (next, current, retiring, retired), made, signs from.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let lines = try await SigningKeysCommand.withKeys(database) { keys in
                let schedule = try await keys.schedule()
                let now = Date()
                return schedule.keys.reversed().map { key in
                    "\(key.kid)  \(schedule.state(of: key, at: now).rawValue)  made \(RFC3339.format(key.createdAt))  signs from \(RFC3339.format(key.activatesAt))"
                }
            }
            for line in lines { print(line) }
        }
    }
}
