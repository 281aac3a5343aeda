import ArgumentParser
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import LedgerWorkers

/// `ledger-bench purge`: creates deleted accounts of ~20 events each, due for purge, then times
/// purging them all with the given number of workers. With `--feed-writers N`, N writers append
/// meanwhile and a consumer follows the feed: the longest gap it sees between two deliveries is
/// how long a purge holds every consumer back (BENCHMARKS.md, the purge rows).
struct PurgeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "purge", abstract: "Accounts purged/s with N workers.")

    @OptionGroup var database: BenchDatabase
    @Option(help: "Deleted accounts to create and purge.") var accounts = 10_000
    @Option(help: "Concurrent purge workers.") var workers = 1
    @Option(help: "Writers appending while the purge runs, followed by one feed consumer (0: none).") var feedWriters = 0

    func run() async throws {
        let url = try database.requiredURL(try LedgerConfiguration.fromEnvironment())
        let masterKey = try benchMasterKey()
        let assembly = StoreAssembly(url: url, connections: 16, masterKey: masterKey)
        let client = assembly.client
        try await SchemaMigrator(directory: try SchemaDirectory.locate()).migrate(client: client)
        // The accounts are made 31 days in the past, so their purge is due now.
        let past = ManualClock(Date().addingTimeInterval(-31 * 86400))
        // The same pool and key as the assembly's store, stamping the past.
        let pastStore = EventStore(client: client, keyring: SubjectKeyring(masterKey: masterKey), clock: past)
        let environment = AccountsEnvironment.postgres(
            store: pastStore, clock: past, policies: .standard, retention: .development,
            hasher: assembly.resources.own(try PasswordHasher(parameters: Scrypt(logN: 4))))
        let service = AccountService(environment: environment)
        let reauth = ReauthService(environment: environment)
        let runID = UUID().uuidString.prefix(8).lowercased()
        let setupStarted = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in stride(from: lane, to: accounts, by: 8) {
                        try await Self.deletedAccount(service, reauth, email: "bench-\(runID)-\(index)@example.org")
                    }
                }
            }
            try await group.waitForAll()
        }
        let events = try await client.query(
            "SELECT count(*) FROM events e JOIN accounts a ON a.account_id = e.stream_id WHERE a.purge_after IS NOT NULL")
        let perAccount = Double(try events[0].int(0) ?? 0) / Double(max(accounts, 1))
        print(
            String(
                format: "bench purge setup accounts=%d events_per_account=%.1f seconds=%.1f", accounts, perAccount,
                Date().timeIntervalSince(setupStarted)))

        let store = assembly.store
        if feedWriters > 0 {
            // The same load for as long without a purge: the gaps writers alone cause.
            let baseline = FeedLoad(store: store, writers: feedWriters)
            let run = Task { try await baseline.run() }
            try await Task.sleep(for: .seconds(3))
            baseline.stop()
            let quiet = try await run.value
            print(
                String(
                    format: "bench purge baseline (no purge) seconds=3 feed_writers=%d appends=%d feed_longest_gap_ms=%.1f",
                    feedWriters, quiet.appends, quiet.longestGapMS))
        }
        let load = feedWriters > 0 ? FeedLoad(store: store, writers: feedWriters) : nil
        let loadTask = Task { try await load?.run() }
        if load != nil { try await Task.sleep(for: .seconds(1)) }
        let started = ContinuousClock.now
        let purged = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<workers {
                group.addTask { try await PurgeWorker(store: store, clock: SystemClock()).runOnce() }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - started
        load?.stop()
        let feed = try await loadTask.value
        let seconds = elapsed.inSeconds
        print(
            String(
                format: "bench purge workers=%d accounts=%d seconds=%.2f accounts_per_s=%.0f peak_rss_mib=%.1f",
                workers, purged, seconds, Double(purged) / seconds, peakRSSMiB())
                + (feed.map {
                    String(format: " feed_writers=%d appends=%d feed_longest_gap_ms=%.1f", feedWriters, $0.appends, $0.longestGapMS)
                } ?? ""))
        await assembly.resources.shutdown()
    }

    /// Sign-up (5 events), 5 sign-ins and 5 refreshes, a re-auth grant, and the deletion with
    /// its 6 revocations: 23 events.
    static func deletedAccount(_ service: AccountService, _ reauth: ReauthService, email: String) async throws {
        let first = try await service.signUp(email: email, password: "maple-lighthouse-58", displayName: "Bench", handle: nil, device: nil)
        for _ in 0..<5 {
            let session = try await service.signIn(email: email, password: "maple-lighthouse-58", device: nil)
            _ = try await service.refresh(session.refreshToken)
        }
        let ref = SessionRef(accountID: first.accountID, sessionID: first.sessionID)
        let grant = try await reauth.withPassword(ref, password: "maple-lighthouse-58", client: nil)
        _ = try await service.deleteAccount(ref, reauthToken: grant.token)
    }
}

/// Writers appending single events as fast as they commit, and one consumer following the
/// global feed; measures the longest time the consumer went without a delivery.
final class FeedLoad: @unchecked Sendable {
    let store: EventStore
    let writers: Int
    private let lock = NSLock()
    private var stopped = false

    init(store: EventStore, writers: Int) {
        self.store = store
        self.writers = writers
    }

    func stop() { lock.withLock { stopped = true } }
    private var isStopped: Bool { lock.withLock { stopped } }

    /// Runs the store meanwhile, as serve does: the writers' appends are group-committed.
    func run() async throws -> (appends: Int, longestGapMS: Double) {
        try await store.whileRunning { try await writeAndFollow() }
    }

    private func writeAndFollow() async throws -> (appends: Int, longestGapMS: Double) {
        try await withThrowingTaskGroup(of: (Int, Double).self) { group in
            for _ in 0..<writers {
                group.addTask {
                    var appends = 0
                    while !self.isStopped {
                        _ = try await self.store.append(
                            to: UUID(), streamType: "bench", subjectID: nil, expected: .noStream,
                            events: [NewEvent(type: "bench.appended", payload: benchPayload)])
                        appends += 1
                    }
                    return (appends, 0)
                }
            }
            group.addTask {
                var cursor = try await self.store.headCursor()
                var lastDelivery = ContinuousClock.now
                var longest = Duration.zero
                while !self.isStopped {
                    let page = try await self.store.readAll(after: cursor, limit: 1000)
                    if page.events.isEmpty {
                        try await Task.sleep(for: .milliseconds(1))
                        continue
                    }
                    let now = ContinuousClock.now
                    longest = max(longest, now - lastDelivery)
                    lastDelivery = now
                    cursor = page.nextCursor
                }
                return (0, longest.inMilliseconds)
            }
            return try await group.reduce(into: (0, 0.0)) {
                $0.0 += $1.0
                $0.1 = max($0.1, $1.1)
            }
        }
    }
}
