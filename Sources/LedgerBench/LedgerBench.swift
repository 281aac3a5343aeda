import ArgumentParser
import LedgerApp
import LedgerServer

/// `ledger-bench`: the benchmarks of BENCHMARKS.md, apart from the service's own `ledger`
/// binary (scripts/bench/ runs them against a release build and a private cluster).
@main
struct LedgerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-bench", abstract: "Measure event-store and service throughput (BENCHMARKS.md).",
        subcommands: [
            AppendBench.self, FeedBench.self, HistoryBench.self, ScryptBench.self, OTPBench.self, PurgeBench.self,
            LoginFloodBench.self, MFABench.self, PasskeyBench.self, RebuildBench.self, SMTPBench.self,
        ])
}

/// Where the database is: `--database-url`, else `DATABASE_URL`.
struct BenchDatabase: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "PostgreSQL connection URL (default: $DATABASE_URL).")
    var url: String?

    func requiredURL(_ configuration: LedgerConfiguration) throws -> String {
        guard let url = url ?? configuration.databaseURL else { throw ValidationError("set DATABASE_URL (or --database-url)") }
        return url
    }
}
