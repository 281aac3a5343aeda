import Foundation
import LedgerPostgres

extension ServeAssembly {
    /// Without a database URL, `serve` runs on a local PostgreSQL cluster in
    /// `.ledger/dev-cluster`, kept between runs (`./scripts/run.sh --reset` deletes it), and
    /// writes its URL to `.ledger/dev.env` for `scripts/ledger`.
    public static func startDevelopmentCluster() async throws -> LocalCluster {
        let directory = URL(
            fileURLWithPath: DevelopmentFiles.cluster, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        let cluster = try await LocalCluster.open(directory: directory.standardizedFileURL, database: "ledger")
        try "DATABASE_URL=\(cluster.url)\n".write(toFile: DevelopmentFiles.environment, atomically: true, encoding: .utf8)
        return cluster
    }

    /// Writes `.ledger/dev.env` again, with the link base the development server settled on
    /// beside the cluster's URL: `scripts/ledger` passes both on, so a command that makes a link
    /// (`ledger staff add`, whose console takes its origin from a local link base) makes this
    /// server's.
    public static func recordDevelopmentSettings(_ configuration: LedgerConfiguration, cluster: LocalCluster) throws {
        try "DATABASE_URL=\(cluster.url)\nLEDGER_LINK_BASE_URL=\(configuration.linkBaseURL)\n".write(
            toFile: DevelopmentFiles.environment, atomically: true, encoding: .utf8)
    }

    /// What development mode prints at start: what it set up, where messages go, and the
    /// commands a newcomer needs next. `cluster` is nil for `--dev` on a database of one's own.
    public static func developmentBanner(_ configuration: LedgerConfiguration, cluster: LocalCluster?) -> String {
        let address = "http://\(configuration.host == "127.0.0.1" ? "localhost" : configuration.host):\(configuration.port)"
        var lines = [" DEVELOPMENT MODE — not for production."]
        if let cluster {
            lines += [
                " No DATABASE_URL was set, so a local PostgreSQL cluster runs at",
                " \(cluster.url)",
                " (files in \(DevelopmentFiles.cluster), kept between runs; ./scripts/run.sh --reset starts afresh).",
            ]
        } else {
            lines.append(" --dev: pending migrations are applied on start.")
        }
        lines += [
            configuration.masterKey == nil
                ? " Payloads are sealed with the development master key in \(DevelopmentFiles.masterKey)."
                : " Payloads are sealed with LEDGER_MASTER_KEY.",
            " Serving \(address)" + (configuration.host == "127.0.0.1" ? " on this machine only (--host 0.0.0.0 to widen)." : "."),
            " Emails and texts are not sent: they are logged below and kept in \(DevelopmentFiles.messages);",
            " email links open \(configuration.linkBaseURL)/…, served here.",
            "",
            " Next, in another terminal:",
            "   curl -s \(address)/healthz",
            "   ./scripts/ledger keys create --name my-backend --scope events:read   # an API key",
            "   ./scripts/ledger dev messages                                         # the messages sent",
            " Set DATABASE_URL and LEDGER_MASTER_KEY for a real deployment (docs/going-live.md).",
        ]
        let rule = String(repeating: "─", count: 78)
        return ([rule] + lines + [rule, ""]).joined(separator: "\n")
    }
}
