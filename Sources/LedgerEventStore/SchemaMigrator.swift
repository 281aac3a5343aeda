import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres
import Logging

/// Applies the numbered SQL files of `schema/` in order, each once, each in its own
/// transaction, under an advisory lock so that several instances may run it at once.
///
/// Applied files are recorded with a SHA-256 checksum; an applied file that changed or
/// disappeared stops everything (`SchemaError`) rather than leaving a database that no file describes.
public struct SchemaMigrator: Sendable {
    /// One migration file.
    public struct Migration: Sendable, Hashable {
        public let version: Int
        public let name: String
        public let sql: String

        public init(version: Int, name: String, sql: String) {
            self.version = version
            self.name = name
            self.sql = sql
        }

        public var checksum: String { Hex.encode(SHA256.hash(Array(sql.utf8))) }
    }

    /// What the database has compared with the files.
    public struct Status: Sendable {
        public let applied: [Int]
        public let pending: [Migration]
        /// Applied versions whose file changed or is gone.
        public let mismatched: [Int]
        public var isCurrent: Bool { pending.isEmpty && mismatched.isEmpty }
    }

    public let migrations: [Migration]
    let logger: Logger

    /// An arbitrary constant naming this lock among advisory locks (a projections rebuild
    /// holds it too, so no migration changes the tables it copies).
    public static let lockKey: Int64 = 0x4C45_4447_4552_4D47  // "LEDGERMG"

    public init(directory: URL, logger: Logger = Logger(label: "ledger.migrate")) throws {
        self.migrations = try Self.load(directory)
        self.logger = logger
    }

    public init(migrations: [Migration], logger: Logger = Logger(label: "ledger.migrate")) {
        self.migrations = migrations
        self.logger = logger
    }

    static func load(_ directory: URL) throws -> [Migration] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".sql") }.sorted()
        var seen = Set<Int>()
        var migrations: [Migration] = []
        for name in names {
            guard let prefix = name.split(separator: "_").first, let version = Int(prefix) else {
                throw SchemaError("migration file \(name) does not start with a number (NNN_name.sql)")
            }
            guard seen.insert(version).inserted else { throw SchemaError("two migration files have number \(version)") }
            let sql = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            migrations.append(Migration(version: version, name: name, sql: sql))
        }
        guard !migrations.isEmpty else { throw SchemaError("no migration files in \(directory.path)") }
        return migrations.sorted { $0.version < $1.version }
    }

    /// Applies every pending migration; returns the versions applied by this call.
    @discardableResult
    public func migrate(client: PostgresClient) async throws -> [Int] {
        try await client.withConnection { connection in
            // Nothing to do needs no lock: an instance starting with `--migrate` while a
            // projections rebuild holds the lock would otherwise wait for the whole rebuild.
            let before = try await status(on: connection)
            if before.isCurrent { return [] }
            try await connection.query("SELECT pg_advisory_lock($1)", [.int(Self.lockKey)])
            do {
                let applied = try await apply(on: connection)
                try await connection.query("SELECT pg_advisory_unlock($1)", [.int(Self.lockKey)])
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock($1)", [.int(Self.lockKey)])
                throw error
            }
        }
    }

    private func apply(on connection: PostgresConnection) async throws -> [Int] {
        try await connection.query(
            """
            SET client_min_messages = warning;
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    int PRIMARY KEY,
                name       text NOT NULL,
                checksum   text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now());
            RESET client_min_messages;
            """)
        let status = try await status(on: connection)
        if !status.mismatched.isEmpty {
            throw SchemaError(
                "applied migrations \(status.mismatched.map(String.init).joined(separator: ", ")) no longer match their files; "
                    + "restore the files (never edit an applied migration, add a new one)")
        }
        var done: [Int] = []
        for migration in status.pending {
            try await connection.query("BEGIN")
            do {
                try await connection.query(migration.sql)
                try await connection.query(
                    "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                    [.int(Int64(migration.version)), .text(migration.name), .text(migration.checksum)])
                try await connection.query("COMMIT")
            } catch {
                _ = try? await connection.query("ROLLBACK")
                throw SchemaError("migration \(migration.name) failed: \(error)")
            }
            logger.info("applied migration", metadata: ["migration": "\(migration.name)"])
            done.append(migration.version)
        }
        return done
    }

    /// Compares the database with the files without changing anything.
    public func status(client: PostgresClient) async throws -> Status {
        try await client.withConnection { try await status(on: $0) }
    }

    /// Whether the schema migrations would write into holds nothing at all: no table, view,
    /// index or sequence. Only such a database may be set up without a deliberate `migrate`
    /// (one that merely lacks `schema_migrations` may be somebody else's).
    public func schemaIsEmpty(client: PostgresClient) async throws -> Bool {
        let rows = try await client.query(
            """
            SELECT current_schema() IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema())
            """)
        return try rows[0].bool(0) == true
    }

    func status(on connection: PostgresConnection) async throws -> Status {
        let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL")
        var recorded: [Int: String] = [:]
        if try exists[0].bool(0) == true {
            for row in try await connection.query("SELECT version, checksum FROM schema_migrations").rows {
                if let version = try row.int(0), let checksum = row.string(1) { recorded[Int(version)] = checksum }
            }
        }
        let byVersion = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        let mismatched = recorded.filter { version, checksum in byVersion[version]?.checksum != checksum }.keys.sorted()
        let pending = migrations.filter { recorded[$0.version] == nil }
        return Status(applied: recorded.keys.sorted(), pending: pending, mismatched: mismatched)
    }
}

/// The schema files and the database disagree, or a migration failed.
public struct SchemaError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
