import ArgumentParser
import Foundation
import LedgerAccountsPostgres
import LedgerApp
import LedgerCore
import LedgerIdentity
import LedgerServer

/// `ledger accounts find usr_…`: the account behind the user id a person gave support.
struct AccountsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts", abstract: "Find accounts for support.", subcommands: [Find.self])

    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the account id (and when it was created) behind a public user id such as usr_7G8H9K2LQM.")

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The public user id, as the support email's subject carries it.")
        var userID: String

        func run() async throws {
            Ledger.bootstrapLogging()
            guard let publicID = PublicUserID(userID) else {
                throw ValidationError("a user id is usr_ and 10 letters or digits, such as usr_7G8H9K2LQM")
            }
            let configuration = try LedgerConfiguration.fromEnvironment()
            let found = try await database.withClient(configuration) { try await AccountDirectory.accounts(with: publicID, client: $0) }
            for entry in found {
                let created = entry.createdAt.map(RFC3339.format) ?? "-"
                print("\(entry.accountID.lowercased) created \(created)\(entry.deleted ? " (deleted)" : "")")
            }
            if found.isEmpty { print("no account has the user id \(publicID)") }
        }
    }
}
