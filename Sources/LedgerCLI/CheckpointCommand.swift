import ArgumentParser
import Foundation
import LedgerApp
import LedgerCrypto
import LedgerEventStore
import LedgerServer

/// `ledger checkpoint`: signed checkpoints of the whole ledger, for auditors.
struct CheckpointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpoint", abstract: "Sign a checkpoint of every stream head and the feed position.",
        subcommands: [Create.self, Keygen.self], defaultSubcommand: Create.self)

    /// `ledger checkpoint [create] --private-key FILE [--out FILE]`.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Sign a checkpoint, store it in the database and write the document out.")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "The Ed25519 private key (PKCS#8 PEM), from `ledger checkpoint keygen` or `openssl genpkey -algorithm ed25519`.")
        var privateKey: String

        @Option(help: "Write the checkpoint document here (default: standard output).")
        var out: String?

        func run() async throws {
            Ledger.bootstrapLogging()
            let signingKey = try KeyFiles.privateKey(at: privateKey)
            let checkpoint = try await database.withClient(try LedgerConfiguration.fromEnvironment()) { client in
                // A checkpoint reads hashes only; no payload is opened, so any master key will do.
                let store = EventStore(client: client, keyring: SubjectKeyring(masterKey: try MasterKey.generate()))
                return try await store.createCheckpoint(signingKey: signingKey)
            }
            let document = try checkpoint.document()
            if let out {
                try Data(document.utf8).write(to: URL(fileURLWithPath: out), options: .atomic)
                // The summary goes to standard error so standard output stays the document alone.
                FileHandle.standardError.write(
                    Data(
                        "checkpoint \(checkpoint.id.lowercased): \(checkpoint.events) event(s), \(checkpoint.streams.count) stream(s), written to \(out)\n"
                            .utf8))
            } else {
                print(document, terminator: "")
            }
        }
    }

    /// `ledger checkpoint keygen --private-key FILE --public-key FILE`.
    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "keygen", abstract: "Make an Ed25519 key pair for signing checkpoints.")

        @Option(help: "Where to write the private key (PKCS#8 PEM, mode 0600); must not exist.")
        var privateKey: String

        @Option(help: "Where to write the public key (PEM) that auditors use.")
        var publicKey: String

        func run() async throws {
            let key = try Ed25519.PrivateKey.generate()
            try KeyFiles.writeNew(try key.pemRepresentation, to: privateKey, mode: 0o600)
            try Data(try key.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: publicKey), options: .atomic)
            print("wrote the private key to \(privateKey) (mode 0600) and the public key \(key.publicKey.fingerprint) to \(publicKey)")
        }
    }
}
