import ArgumentParser
import Foundation
import LedgerApp
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerServer

/// A random address in 198.18.0.0/15, the benchmarking range: one client of the many a load
/// generator plays (sent as `X-Forwarded-For` to a service that trusts the loopback proxy).
func benchClientAddress() -> String {
    "198.\(18 + Int.random(in: 0...1)).\(Int.random(in: 0...255)).\(Int.random(in: 1...254))"
}

/// An event payload of the same size as pg-ceiling's row (~310 bytes of JSON).
let benchPayload = Array(
    #"{"orderId":"6f1c2a9e-3b7d-4c1e-9a55-2d8e7f0b1c34","customerId":"c-0042917","currency":"EUR","lines":[{"sku":"SKU-000123","qty":2,"unitPrice":1999},{"sku":"SKU-004567","qty":1,"unitPrice":4950},{"sku":"SKU-008901","qty":3,"unitPrice":725}],"shipping":{"method":"standard","country":"DE"},"note":"leave at door"}"#
        .utf8)

/// `LEDGER_MASTER_KEY` when set (so several runs can read each other's events), else a fresh key.
func benchMasterKey() throws -> MasterKey {
    if let text = ProcessInfo.processInfo.environment["LEDGER_MASTER_KEY"] { return try MasterKey(base64: text) }
    return try MasterKey.generate()
}

/// Peak resident memory of this process, from /proc.
func peakRSSMiB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kib = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kib / 1024
}

struct ScryptBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scrypt", abstract: "scrypt hashes/s on one core.")

    @Option(help: "Seconds to run.") var seconds = 10.0

    func run() async throws {
        let configuration = try LedgerConfiguration.fromEnvironment()
        let scrypt = Scrypt(logN: configuration.policies.scryptLogN)
        let started = ContinuousClock.now
        let deadline = started + .milliseconds(Int(seconds * 1000))
        var hashes = 0
        while ContinuousClock.now < deadline {
            _ = try scrypt.hash("violet-harbor-91")
            hashes += 1
        }
        let elapsed = ContinuousClock.now - started
        let elapsedSeconds = elapsed.inSeconds
        print(
            String(
                format: "bench scrypt ln=%d r=8 p=1 hashes=%d seconds=%.1f hashes_per_s_per_core=%.2f ms_per_hash=%.1f peak_rss_mib=%.1f",
                scrypt.logN, hashes, elapsedSeconds, Double(hashes) / elapsedSeconds, elapsedSeconds * 1000 / Double(hashes), peakRSSMiB()))
    }
}

struct AppendBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "append", abstract: "Appends/s with N concurrent writers.")

    @OptionGroup var database: BenchDatabase
    @Option(help: "Concurrent writers (one connection each).") var writers = 8
    @Option(help: "Seconds to run.") var seconds = 15.0
    @Option(help: "Events per append.") var batch = 1
    @Option(help: "Most append transactions in flight; past the first, only while the queue is stalled.") var transactions = 2
    @Option(help: "Milliseconds without progress before another transaction starts (0: whenever appends wait).") var stallMs = 5

    func run() async throws {
        let url = try database.requiredURL(try LedgerConfiguration.fromEnvironment())
        let assembly = StoreAssembly(
            url: url, connections: writers + 1, masterKey: try benchMasterKey(), appendTransactions: transactions,
            appendStallThreshold: .milliseconds(stallMs))
        let writers = self.writers
        let batch = self.batch
        let seconds = self.seconds
        // Run, as serve runs it: the group commit's flushers are the store's jobs.
        let (counts, elapsed) = try await assembly.run { assembly in
            let store = assembly.store
            try await SchemaMigrator(directory: try SchemaDirectory.locate()).migrate(client: assembly.client)
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            let started = ContinuousClock.now
            let counts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<writers {
                    group.addTask {
                        let streams = (0..<50).map { _ in UUID() }
                        var appended = 0
                        var turn = 0
                        while ContinuousClock.now < deadline {
                            let stream = streams[turn % streams.count]
                            turn += 1
                            let events = (0..<batch).map { _ in NewEvent(type: "bench.appended", payload: benchPayload) }
                            try await store.append(to: stream, streamType: "bench", subjectID: stream, expected: .any, events: events)
                            appended += batch
                        }
                        return appended
                    }
                }
                return try await group.reduce(0, +)
            }
            return (counts, ContinuousClock.now - started)
        }
        let elapsedSeconds = elapsed.inSeconds
        let appendsPerSecond = Double(counts / batch) / elapsedSeconds
        print(
            String(
                format: "bench append writers=%d batch=%d seconds=%.1f events=%d appends_per_s=%.0f events_per_s=%.0f peak_rss_mib=%.1f",
                writers, batch, elapsedSeconds, counts, appendsPerSecond, Double(counts) / elapsedSeconds, peakRSSMiB()))
    }
}

struct FeedBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feed", abstract: "Global-feed read rate over N events (loads them first when missing).")

    @OptionGroup var database: BenchDatabase
    @Option(help: "Events in the feed.") var events = 1_000_000
    @Option(help: "Events per page.") var pageSize = 10_000
    @Option(help: "A hot standby of the database: the same read is measured there too, once it has caught up.")
    var readDatabaseURL: String?

    func run() async throws {
        let url = try database.requiredURL(try LedgerConfiguration.fromEnvironment())
        try await StoreAssembly(url: url, connections: 4, masterKey: try benchMasterKey()).run { assembly in
            try await measure(on: assembly)
        }
    }

    /// Loads the events that are missing, then measures the primary (and the standby).
    private func measure(on assembly: StoreAssembly) async throws {
        let (client, store) = (assembly.client, assembly.store)
        try await SchemaMigrator(directory: try SchemaDirectory.locate()).migrate(client: client)
        let present = try await client.query("SELECT count(*) FROM events")[0].int(0) ?? 0
        if present < events { try await load(Int(Int64(events) - present), into: store) }
        try await client.query("VACUUM ANALYZE events")
        try await measure(store, label: "primary")
        if let readDatabaseURL {
            let standby = assembly.pool(url: readDatabaseURL, connections: 4)
            // Once the standby has replayed everything the primary wrote (the VACUUM included).
            let target = try await client.query("SELECT pg_current_wal_lsn()::text")[0].string(0) ?? "0/0"
            while try await standby.query(
                "SELECT pg_wal_lsn_diff($1::pg_lsn, pg_last_wal_replay_lsn()) > 0", [.text(target)])[0].bool(0) == true
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            try await measure(store.reading(from: standby), label: "standby")
        }
    }

    /// A warm-up read, then a timed full read in commit order with payloads opened.
    private func measure(_ store: EventStore, label: String) async throws {
        _ = try await readAll(store)
        let started = ContinuousClock.now
        let (read, bytes) = try await readAll(store)
        let elapsed = ContinuousClock.now - started
        let elapsedSeconds = elapsed.inSeconds
        let figures = String(
            format: "events=%d page=%d seconds=%.2f events_per_s=%.0f payload_mib=%.1f peak_rss_mib=%.1f",
            read, pageSize, elapsedSeconds, Double(read) / elapsedSeconds, Double(bytes) / 1_048_576, peakRSSMiB())
        print(label == "primary" ? "bench feed \(figures)" : "bench feed from the \(label) \(figures)")
    }

    private func readAll(_ store: EventStore) async throws -> (Int, Int) {
        var cursor = FeedCursor.start
        var read = 0
        var bytes = 0
        while true {
            let page = try await store.readAll(after: cursor, limit: pageSize)
            if page.events.isEmpty { return (read, bytes) }
            read += page.events.count
            for event in page.events { bytes += event.payload?.count ?? 0 }
            cursor = page.nextCursor
        }
    }

    /// Loads events in 100-event appends over 1,000 subjects, from two writers.
    private func load(_ count: Int, into store: EventStore) async throws {
        let subjects = (0..<1000).map { _ in UUID() }
        let perWriter = (count + 1) / 2
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    var loaded = 0
                    var turn = writer
                    while loaded < perWriter {
                        let size = min(100, perWriter - loaded)
                        let subject = subjects[turn % subjects.count]
                        turn += 2
                        let events = (0..<size).map { _ in NewEvent(type: "bench.appended", payload: benchPayload) }
                        try await store.append(to: subject, streamType: "bench", subjectID: subject, expected: .any, events: events)
                        loaded += size
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
