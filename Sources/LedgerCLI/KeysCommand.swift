import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerApp
import LedgerCore
import LedgerPostgres
import LedgerServer

/// `ledger keys create|list|revoke`: API keys for backends, auditors and compliance jobs.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys", abstract: "Manage API keys.", subcommands: [Create.self, List.self, Revoke.self])

    static func withKeys<T>(_ database: DatabaseOptions, _ body: (APIKeys) async throws -> T) async throws -> T {
        Ledger.bootstrapLogging()
        return try await database.withClient(try LedgerConfiguration.fromEnvironment()) { client in
            try await body(APIKeys(client: client, clock: SystemClock()))
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a key; prints it alone on the last line (it is shown once and stored hashed).")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "A label; need not be unique.") var name: String
        @Option(help: "Comma-separated: events:read, audit:read, holds:write, sessions:introspect, admin.") var scope: String

        func run() async throws {
            var scopes: [APIKeys.Scope] = []
            for item in scope.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
                guard let parsed = APIKeys.Scope(rawValue: item) else {
                    throw ValidationError("unknown scope '\(item)'; use \(APIKeys.Scope.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                scopes.append(parsed)
            }
            guard !scopes.isEmpty else { throw ValidationError("give at least one scope") }
            let (id, key) = try await KeysCommand.withKeys(database) { try await $0.create(name: name, scopes: scopes) }
            print("created key \(id.lowercased) (\(name)) with scopes \(scopes.map(\.rawValue).joined(separator: ","))")
            print(key)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List keys (never the keys themselves).")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let keys = try await KeysCommand.withKeys(database) { try await $0.list() }
            for key in keys {
                let state = key.revokedAt == nil ? "active" : "revoked"
                print("\(key.id.lowercased)  \(state)  \(key.scopes.joined(separator: ","))  \(key.name)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key by id.")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The key's id (from `ledger keys list`).") var id: String

        func run() async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("the id must be a UUID") }
            let revoked = try await KeysCommand.withKeys(database) { try await $0.revoke(uuid) }
            print(revoked ? "revoked \(uuid.lowercased)" : "no active key \(uuid.lowercased)")
            if !revoked { throw ExitCode(1) }
        }
    }
}
