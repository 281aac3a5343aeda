import ArgumentParser
import Foundation
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer

/// `ledger verify`: recomputes hash chains and names the first bad position of each broken stream.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verify", abstract: "Verify the events' hash chains.")

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Verify only this account's stream.")
    var account: String?

    func run() async throws {
        Ledger.bootstrapLogging()
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
}
