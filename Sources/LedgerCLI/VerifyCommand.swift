import ArgumentParser
import Foundation
import LedgerApp
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer

/// `ledger verify`: recomputes hash chains and names the first bad position of each broken stream;
/// with `--checkpoint`, proves the history up to a signed checkpoint unchanged instead.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Verify the events' hash chains, or the history up to a signed checkpoint.")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Verify only this account's stream.")
    var account: String?

    @Option(help: "A checkpoint document (from `ledger checkpoint`) to verify the database against.")
    var checkpoint: String?

    @Option(help: "The Ed25519 public key (PEM) the checkpoint must be signed with; required with --checkpoint.")
    var publicKey: String?

    func validate() throws {
        if checkpoint != nil && publicKey == nil {
            throw ValidationError("--checkpoint needs --public-key: the key you trust, not the one inside the file")
        }
        if checkpoint != nil && account != nil {
            throw ValidationError("--checkpoint covers every stream; leave out --account")
        }
    }

    func run() async throws {
        Ledger.bootstrapLogging()
        if let checkpoint, let publicKey {
            return try await verifyCheckpoint(documentPath: checkpoint, publicKeyPath: publicKey)
        }
        let failures = try await database.withClient(try LedgerConfiguration.fromEnvironment(), maximumConnections: 2) { client in
            // Verification reads digests and hashes only; no payload is opened, so any key will do.
            let store = EventStore(client: client, keyring: SubjectKeyring(masterKey: try MasterKey.generate()))
            var failures: [ChainVerification] = []
            if let account {
                guard let streamID = UUID(uuidString: account) else { throw ValidationError("--account must be a UUID") }
                let result = try await store.verify(streamID: streamID)
                print("stream \(streamID.lowercased): \(result.events) event(s), \(result.ok ? "ok" : "BROKEN")")
                if !result.ok { failures.append(result) }
            } else {
                let (count, broken) = try await store.verifyAll()
                failures = broken
                print("verified \(count) stream(s); \(broken.count) broken")
            }
            for failure in failures {
                print("BROKEN \(failure.streamID.lowercased) at version \(failure.firstBadVersion ?? 0): \(failure.reason ?? "")")
            }
            return failures
        }
        if !failures.isEmpty { throw ExitCode(1) }
    }

    /// Exit 0 when the checkpoint holds, 1 with the first bad position when it does not.
    private func verifyCheckpoint(documentPath: String, publicKeyPath: String) async throws {
        let key = try KeyFiles.publicKey(at: publicKeyPath)
        guard let document = try? String(contentsOfFile: documentPath, encoding: .utf8) else {
            throw ValidationError("cannot read the checkpoint file \(documentPath)")
        }
        let result = try await database.withClient(try LedgerConfiguration.fromEnvironment()) { client in
            // Verification reads digests and hashes only; no payload is opened, so any key will do.
            let store = EventStore(client: client, keyring: SubjectKeyring(masterKey: try MasterKey.generate()))
            return try await store.verifyCheckpoint(document: document, publicKey: key)
        }
        if let failure = result.failure {
            print("TAMPERED \(failure.location): \(failure.reason)")
            throw ExitCode(1)
        }
        if let checkpoint = result.checkpoint {
            print(
                "checkpoint \(checkpoint.id.lowercased) (\(checkpoint.createdAt)) holds: \(result.streamsVerified) stream(s) "
                    + "and \(checkpoint.events) event(s) unchanged, signed by \(key.fingerprint)")
        }
    }
}
