import ArgumentParser
import Foundation
import LedgerServer
import Logging

@main
struct Ledger: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger",
        abstract: "Account Ledger: an event-sourced identity and account-lifecycle service.",
        subcommands: [
            ServeCommand.self, MigrateCommand.self, KeysCommand.self, VerifyCommand.self, ProjectionsCommand.self,
            PurgeCommand.self, ReplayCommand.self, EventsCommand.self, CheckpointCommand.self, DevCommand.self, AccountsCommand.self,
            DeliveriesCommand.self, TemplatesCommand.self, ImportCommand.self, SigningKeysCommand.self, StaffCommand.self,
        ])

    /// Runs the command; a configuration error (a setting missing or wrong) is one line on
    /// standard error and exit 2, without the usage text, which is about arguments.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("ledger: \(error.message)\n".utf8))
            Foundation.exit(2)
        } catch {
            exit(withError: error)
        }
    }

    /// Logs go to standard error at `LOG_LEVEL` (default info).
    static func bootstrapLogging() {
        let level = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = LedgerLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
