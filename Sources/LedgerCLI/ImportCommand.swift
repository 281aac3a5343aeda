import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerServer
import Logging

/// `ledger import FILE --format firebase|auth0|jsonl`: brings another system's accounts in,
/// a transaction per batch of 1000 (docs/importing.md). Exits 0 when nothing was refused, 1
/// otherwise, 2 when the file cannot be read at all.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import accounts from Firebase, Auth0 or JSON lines, with their password hashes.",
        discussion: """
            Each record becomes one account (account.imported and the events its facts mean); a record \
            already imported from the same source is skipped, so the same file may run again, after a \
            crash too. Exits 0 when nothing was refused, 1 when a record was, 2 when the file cannot be read.
            """)

    @OptionGroup var database: DatabaseOptions

    @Argument(help: "The file: Firebase's auth:export JSON, Auth0's bulk-import JSON, or JSON lines.")
    var file: String

    @Option(help: "firebase, auth0 or jsonl.")
    var format: ImportFormat

    @Option(name: .customLong("hash-config"), help: "Firebase's password hash parameters (JSON, or the console's text).")
    var hashConfig: String?

    @Option(help: "Names the system the records come from (default: the format). A record is imported once per source.")
    var source: String?

    @Flag(name: .customLong("dry-run"), help: "Check every record and write nothing.")
    var dryRun = false

    @Option(help: "Write one JSON line a record: {index, external_id, account_id?, outcome, reason?}.")
    var report: String?

    @Flag(name: .customLong("skip-passwords"), help: "Import records whose password hash cannot be checked, without a password.")
    var skipPasswords = false

    @Option(help: "Batches written at once, each on its own connection.")
    var jobs = 4

    func validate() throws {
        guard (1...16).contains(jobs) else { throw ValidationError("--jobs is 1 to 16") }
        if let source, !AccountImporter.isValidSource(source) {
            throw ValidationError("--source is 1 to 255 characters, no control characters")
        }
        if hashConfig != nil, format != .firebase { throw ValidationError("--hash-config is Firebase's; --format firebase") }
    }

    func run() async throws {
        Ledger.bootstrapLogging()
        let configuration = try LedgerConfiguration.fromEnvironment()
        let masterKey = try MasterKeySource.load(configuration, allowDevelopmentKey: false, logger: Logger(label: "ledger.import"))
        let records: ImportFile
        let config: FirebaseHashConfig?
        do {
            config = try hashConfig.map { path in
                guard let parsed = FirebaseHashConfig(try Data(contentsOf: URL(fileURLWithPath: path))) else {
                    throw ImportFormat.Unreadable(description: "\(path) is not a Firebase hash config")
                }
                return parsed
            }
            records = try ImportFile(path: file, format: format, hashConfig: config)
        } catch {
            FileHandle.standardError.write(Data("ledger import: \(Self.describe(error))\n".utf8))
            throw ExitCode(2)
        }
        let reportSink = try report.map { try ImportReportFile(path: $0) }
        let options = AccountImporter.Options(source: source ?? format.rawValue, skipPasswords: skipPasswords, dryRun: dryRun)
        let assembly = StoreAssembly(url: try database.requiredURL(configuration), connections: jobs, masterKey: masterKey)
        let progress = ImportProgress(total: records.progressTotal)
        let counts = try await assembly.run { assembly in
            let importer = assembly.importer(policies: configuration.policies, retention: configuration.retention(masterKey: masterKey))
            return try await ImportRun(importer: importer, options: options, jobs: jobs).run(records) { lines, position in
                try reportSink?.write(lines)
                progress.update(lines, position: position)
            }
        }
        progress.finish()
        try reportSink?.close()
        print(
            "imported \(counts.imported), skipped \(counts.skipped), refused \(counts.refused)"
                + (dryRun ? " (dry run: nothing was written)" : ""))
        if counts.refused > 0 { throw ExitCode(1) }
    }

    static func describe(_ error: any Error) -> String {
        if let unreadable = error as? ImportFormat.Unreadable { return unreadable.description }
        if let cocoa = error as? CocoaError, let path = cocoa.filePath { return "cannot read \(path)" }
        return "\(error)"
    }
}

extension ImportFormat: ExpressibleByArgument {}
