import ArgumentParser
import Foundation
import LedgerApp
import LedgerEventStore
import LedgerPostgres
import LedgerServer

/// `ledger migrate`: applies pending schema migrations (safe to run from several places at once).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Apply pending schema migrations.")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Folder of NNN_name.sql files (default: $LEDGER_SCHEMA_DIR, ./schema, or beside the binary).")
    var schema: String?

    @Flag(help: "Only report what is applied and pending.")
    var status = false

    func run() async throws {
        Ledger.bootstrapLogging()
        let directory = try schema.map { URL(fileURLWithPath: $0) } ?? SchemaDirectory.locate()
        let migrator = try SchemaMigrator(directory: directory)
        try await database.withClient(try LedgerConfiguration.fromEnvironment()) { client in
            if status {
                let current = try await migrator.status(client: client)
                print("applied: \(current.applied.map(String.init).joined(separator: ", "))")
                print("pending: \(current.pending.map(\.name).joined(separator: ", "))")
                if !current.mismatched.isEmpty {
                    print("CHANGED since applied: \(current.mismatched.map(String.init).joined(separator: ", "))")
                    throw ExitCode(1)
                }
                return
            }
            let applied = try await migrator.migrate(client: client)
            print(
                applied.isEmpty
                    ? "schema is up to date" : "applied \(applied.count) migration(s): \(applied.map(String.init).joined(separator: ", "))")
        }
    }
}
