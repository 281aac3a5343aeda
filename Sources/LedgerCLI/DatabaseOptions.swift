import ArgumentParser
import Foundation
import LedgerApp
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import Logging

/// Where the database is: `--database-url`, else `DATABASE_URL`.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "PostgreSQL connection URL (default: $DATABASE_URL).")
    var databaseURL: String?

    func requiredURL(_ configuration: LedgerConfiguration) throws -> String {
        guard let url = databaseURL ?? configuration.databaseURL else {
            throw ConfigurationError("set DATABASE_URL (or --database-url) to the PostgreSQL database")
        }
        return url
    }

    /// Runs a one-shot command's `body` with a small pool on the database, and closes the
    /// pool whether the body returns or throws.
    func withClient<T>(
        _ configuration: LedgerConfiguration, maximumConnections: Int = 1, _ body: (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: .init(url: try requiredURL(configuration), maximumConnections: maximumConnections))
        do {
            let value = try await body(client)
            await client.shutdown()
            return value
        } catch {
            await client.shutdown()
            throw error
        }
    }
}

extension DatabaseOptions {
    /// Runs `body` with an event store that can open payloads (`LEDGER_MASTER_KEY` is required),
    /// built and shut down as every one-shot command's (`StoreAssembly`).
    func withStore<T: Sendable>(
        _ configuration: LedgerConfiguration, maximumConnections: Int = 2, _ body: (EventStore) async throws -> T
    ) async throws -> T {
        guard let text = configuration.masterKey else {
            throw ConfigurationError("set LEDGER_MASTER_KEY: payloads must be opened")
        }
        let masterKey: MasterKey
        do {
            masterKey = try MasterKey(base64: text)
        } catch {
            throw ConfigurationError("LEDGER_MASTER_KEY must be base64 of 32 bytes")
        }
        let assembly = StoreAssembly(url: try requiredURL(configuration), connections: maximumConnections, masterKey: masterKey)
        return try await assembly.run { try await body($0.store) }
    }
}

/// The master key from `LEDGER_MASTER_KEY`, or the development key kept under `.ledger/`.
enum MasterKeySource {
    static let developmentKeyPath = DevelopmentFiles.masterKey

    static func load(_ configuration: LedgerConfiguration, allowDevelopmentKey: Bool, logger: Logger) throws -> MasterKey {
        if let text = configuration.masterKey {
            do {
                return try MasterKey(base64: text)
            } catch {
                throw ConfigurationError("LEDGER_MASTER_KEY must be base64 of 32 bytes")
            }
        }
        guard allowDevelopmentKey else {
            throw ConfigurationError(
                "set LEDGER_MASTER_KEY to base64 of 32 random bytes (openssl rand -base64 32), or pass --dev for a development key")
        }
        let url = URL(fileURLWithPath: developmentKeyPath)
        if let saved = try? String(contentsOf: url, encoding: .utf8), let key = try? MasterKey(base64: saved) {
            return key
        }
        let key = try MasterKey.generate()
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data((key.base64 + "\n").utf8).write(to: url, options: .atomic)
        chmod(url.path, 0o600)
        logger.warning("generated a development master key", metadata: ["path": "\(developmentKeyPath)", "key_id": "\(key.keyID)"])
        return key
    }
}
