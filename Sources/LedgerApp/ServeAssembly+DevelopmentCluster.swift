import Foundation
import LedgerPostgres

extension ServeAssembly {
    /// Without a database URL, `serve` runs on a throwaway local PostgreSQL cluster in
    /// `.ledger/dev-cluster` (deleted when the process stops), and says so on standard error.
    public static func startDevelopmentCluster() async throws -> LocalCluster {
        let directory = URL(
            fileURLWithPath: ".ledger/dev-cluster", relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        let cluster = try await LocalCluster.start(directory: directory.standardizedFileURL, database: "ledger")
        FileHandle.standardError.write(
            Data(
                """
                ────────────────────────────────────────────────────────────────────────
                 DEVELOPMENT SETUP — not for production.
                 No DATABASE_URL was set, so a throwaway PostgreSQL cluster is running at
                 \(cluster.url)
                 (files in .ledger/dev-cluster, deleted when this process stops), and
                 payloads are sealed with a development master key (.ledger/dev-master-key).
                 Set DATABASE_URL and LEDGER_MASTER_KEY for a real deployment.
                ────────────────────────────────────────────────────────────────────────

                """.utf8))
        return cluster
    }
}
