import Foundation
import LedgerEventStore
import LedgerPostgres

/// A primary and its hot standby on this machine, for the readers-on-a-replica tests: a fresh
/// cluster (apart from the shared test cluster, whose many databases a base backup would copy)
/// and a standby made from it by `pg_basebackup -R`, both stopped and removed afterwards.
public enum TestReplication {
    public static func withPrimaryAndStandby<T>(
        _ body: (_ primary: PostgresClient, _ standby: PostgresClient) async throws -> T
    ) async throws -> T {
        try await withClusters { primary, standby, _ in try await body(primary, standby) }
    }

    /// `withPrimaryAndStandby`, with the primary's server too, to stop and start (a failover's
    /// time with no primary).
    public static func withClusters<T>(
        _ body: (_ primary: PostgresClient, _ standby: PostgresClient, _ primaryServer: LocalCluster) async throws -> T
    ) async throws -> T {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-standby-\(UUID().uuidString.prefix(8))")
        let primaryCluster = try await LocalCluster.start(directory: root.appendingPathComponent("primary"), database: "ledger")
        defer { primaryCluster.stop() }
        let primary = PostgresClient(configuration: .init(url: primaryCluster.url, maximumConnections: 16))
        do {
            try await SchemaMigrator(directory: TestPostgres.schemaDirectory).migrate(client: primary)
        } catch {
            await primary.shutdown()
            throw error
        }
        let standbyCluster: LocalCluster
        do {
            standbyCluster = try primaryCluster.startStandby(directory: root.appendingPathComponent("standby"))
        } catch {
            await primary.shutdown()
            throw error
        }
        defer { standbyCluster.stop() }
        let standby = PostgresClient(configuration: .init(url: standbyCluster.url, maximumConnections: 8))
        do {
            let result = try await body(primary, standby, primaryCluster)
            await primary.shutdown()
            await standby.shutdown()
            return result
        } catch {
            await primary.shutdown()
            await standby.shutdown()
            throw error
        }
    }
}
