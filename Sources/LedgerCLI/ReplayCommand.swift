import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerApp
import LedgerIdentity
import LedgerServer

/// `ledger replay --account ID [--at T]`: an account's history, then its state folded up to `T`
/// (the same fold as `GET /accounts/{id}/state`).
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay", abstract: "Replay an account's events and print its state at a time.")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "The account id.")
    var account: String

    @Option(help: "An RFC 3339 time (default: now); events recorded after it are not folded.")
    var at: String?

    func run() async throws {
        Ledger.bootstrapLogging()
        guard let accountID = UUID(uuidString: account) else { throw ValidationError("--account must be a UUID") }
        let instant =
            try at.map { text in
                guard let date = RFC3339.parse(text) else { throw ValidationError("--at must be an RFC 3339 time") }
                // As `GET /accounts/{id}/state?at=`: the whole second the listing shows.
                return RFC3339.endOfSecond(date)
            } ?? Date()
        let found = try await database.withStore(try LedgerConfiguration.fromEnvironment()) { store in
            let audit = AccountAudit(store: store)
            guard let history = try await audit.history(accountID) else { return false }
            for event in history {
                let marker = event.recordedAt > instant ? "  (after --at, not folded)" : ""
                let redacted = event.isRedacted ? "  [redacted]" : ""
                print("v\(event.streamVersion)\t\(RFC3339.format(event.recordedAt))\t\(event.type)\(redacted)\(marker)")
            }
            guard let state = try await audit.state(accountID, at: instant) else {
                print("no state at \(RFC3339.format(instant)): the account did not exist yet")
                return true
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(PointInTimeBody(state)), as: UTF8.self))
            return true
        }
        guard found else {
            FileHandle.standardError.write(Data("no account \(accountID.uuidString.lowercased())\n".utf8))
            throw ExitCode(1)
        }
    }
}
