import ArgumentParser
import Foundation
import LedgerAccountsPostgres
import LedgerApp
import LedgerIdentity
import LedgerServer

/// `ledger deliveries list --failed`: the SMS and emails given up, for an operator to see why
/// (a bad number, a relay refusing). Recipients are masked; nothing a message carried is kept.
struct DeliveriesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deliveries", abstract: "Look at outgoing SMS and emails.", subcommands: [List.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the messages given up, newest first.")
        @OptionGroup var database: DatabaseOptions
        @Flag(help: "Only the messages given up (the only kind kept: delivered ones leave nothing to show).") var failed = false
        @Option(help: "At most this many.") var limit = 100

        func run() async throws {
            guard failed else { throw ValidationError("use --failed: delivered messages keep nothing to list") }
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be from 1 to 10000") }
            Ledger.bootstrapLogging()
            let rows = try await database.withClient(try LedgerConfiguration.fromEnvironment()) {
                try await Outbox.failed(limit: limit, client: $0)
            }
            if rows.isEmpty { print("no message was given up") }
            for row in rows {
                print(
                    [
                        RFC3339.format(row.failedAt), row.channel, row.provider ?? "-", row.template, row.recipient ?? "-",
                        "\(row.attempts) tries", row.error ?? "-",
                    ].joined(separator: "  "))
            }
        }
    }
}
