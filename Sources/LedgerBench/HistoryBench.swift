import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import LedgerServer

/// `ledger-bench history`: writes account histories straight to the event store, for the
/// benchmarks that read them back (`projections rebuild`, point-in-time state).
///
/// Each account registers with an email and a password, then alternates between what a busy
/// account does: sessions started and refreshed, holds placed and released, profile edits. The
/// events are sealed with each account's data key (`LEDGER_MASTER_KEY`) like real ones and
/// recorded a minute apart, so point-in-time reads have a spread of instants to pick from.
/// Projections are not written: `ledger projections rebuild` makes them.
struct HistoryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "Write synthetic account histories (for rebuild and point-in-time benchmarks).")

    @OptionGroup var database: BenchDatabase
    @Option(help: "Accounts to create.") var accounts = 10_000
    @Option(help: "Events per account.") var eventsPerAccount = 100
    @Option(help: "Concurrent writers.") var writers = 4
    @Option(help: "Events per append (each append gets its own recorded minute).") var batch = 100

    func run() async throws {
        let configuration = try LedgerConfiguration.fromEnvironment()
        let url = try database.requiredURL(configuration)
        let assembly = StoreAssembly(url: url, connections: writers, masterKey: try benchMasterKey())
        try await assembly.run { try await write(on: $0) }
    }

    /// Writes the accounts' histories through `assembly`'s store and prints the rate.
    private func write(on assembly: StoreAssembly) async throws {
        let store = assembly.store
        try await SchemaMigrator(directory: try SchemaDirectory.locate()).migrate(client: assembly.client)
        let started = ContinuousClock.now
        let (accounts, eventsPerAccount, writers, batch) = (self.accounts, self.eventsPerAccount, self.writers, self.batch)
        let bar = ProgressBar(label: "history")
        let (written, someAccount) = try await withThrowingTaskGroup(of: (Int, UUID?).self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var events = 0
                    var accountID: UUID?
                    for number in stride(from: writer, to: accounts, by: writers) {
                        let (id, count) = try await Self.writeAccount(number, events: eventsPerAccount, batch: batch, store: store)
                        events += count
                        accountID = id
                        if writer == 0 { bar.update(done: number + 1, total: accounts, detail: "accounts") }
                    }
                    return (events, accountID)
                }
            }
            return try await group.reduce((0, nil)) { ($0.0 + $1.0, $0.1 ?? $1.1) }
        }
        bar.finish()
        let elapsed = ContinuousClock.now - started
        let seconds = elapsed.inSeconds
        print(
            String(
                format: "bench history accounts=%d events=%d seconds=%.1f events_per_s=%.0f", accounts, written, seconds,
                Double(written) / seconds))
        // The last line names an account, for the point-in-time benchmark to read.
        if let someAccount { print("account \(someAccount.lowercased)") }
    }

    /// One account's history, appended `batch` events at a time; returns its id and how many events.
    static func writeAccount(_ number: Int, events count: Int, batch: Int, store: EventStore) async throws -> (UUID, Int) {
        let accountID = UUID()
        let start = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01
        var history: [AccountEvent] = [
            .registered(
                .init(
                    email: "bench-\(number)-\(accountID.lowercased.prefix(8))@bench.invalid", displayName: "Bench \(number)",
                    method: "email")),
            .passwordSet(.init(passwordHash: "$scrypt$ln=17,r=8,p=1$c2FsdA$aGFzaA", reason: .signup)),
        ]
        var sessions: [UUID] = []
        var openHolds: [String] = []
        var step = 1
        while history.count < count {
            step += 1
            let at = start.addingTimeInterval(Double(step) * 60)
            switch step % 10 {
            case 0, 5:
                let sessionID = UUID()
                sessions.append(sessionID)
                history.append(
                    .sessionStarted(
                        .init(
                            sessionID: sessionID, method: "password", device: "iPhone",
                            accessTokenHash: Hex.encode(SHA256.hash("a\(accountID)\(step)")),
                            refreshTokenHash: Hex.encode(SHA256.hash("r\(accountID)\(step)")), accessExpiresAt: at.addingTimeInterval(900),
                            refreshExpiresAt: at.addingTimeInterval(2_592_000))))
            case 1, 2, 6, 7:
                guard let sessionID = sessions.last else { continue }
                history.append(
                    .sessionRefreshed(
                        .init(
                            sessionID: sessionID, accessTokenHash: Hex.encode(SHA256.hash("a\(accountID)\(step)")),
                            refreshTokenHash: Hex.encode(SHA256.hash("r\(accountID)\(step)")), accessExpiresAt: at.addingTimeInterval(900),
                            refreshExpiresAt: at.addingTimeInterval(2_592_000))))
            case 3:
                let ref = "booking-\(step)"
                openHolds.append(ref)
                history.append(
                    .holdPlaced(Hold(ref: ref, kind: .upcomingBooking, startsAt: at.addingTimeInterval(86_400), title: "Session \(step)")))
            case 8:
                guard !openHolds.isEmpty else { continue }
                history.append(.holdReleased(.init(ref: openHolds.removeFirst())))
            default:
                history.append(.profileUpdated(.init(displayName: "Bench \(number) \(step)")))
            }
        }
        var version: Int64 = 0
        for chunkStart in stride(from: 0, to: history.count, by: max(batch, 1)) {
            let chunk = history[chunkStart..<min(chunkStart + max(batch, 1), history.count)]
            let newEvents = try chunk.map { NewEvent(type: $0.type, schemaVersion: $0.schemaVersion, payload: try $0.encodedPayload()) }
            // One recorded time per append: the chunk's first event's minute.
            let recordedAt = start.addingTimeInterval(Double(chunkStart) * 60)
            let result = try await store.client.withConnection { connection in
                try await store.append(
                    to: accountID, streamType: PostgresAccountRepository.streamType, subjectID: accountID, expected: .exact(version),
                    events: newEvents,
                    recordedAt: recordedAt, on: connection)
            }
            version = result.lastVersion
        }
        return (accountID, history.count)
    }
}
