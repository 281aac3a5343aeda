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
import Synchronization

/// `ledger-bench rebuild`: `ledger projections rebuild` (the same function) while `--writers`
/// commands run against the store's accounts, each a profile edit through `AccountService`
/// (fold, decide, append, projections in one transaction). The same load runs first for
/// `--baseline-seconds` without a rebuild: the longest command wait during the rebuild is read
/// beside the longest without one.
struct RebuildBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rebuild", abstract: "Rebuild the projections under command load; report the longest command wait.")

    @OptionGroup var database: BenchDatabase
    @Option(help: "Concurrent writers running commands.") var writers = 8
    @Option(help: "Seconds of the same load without a rebuild, first.") var baselineSeconds = 10

    func run() async throws {
        let url = try database.requiredURL(try LedgerConfiguration.fromEnvironment())
        let assembly = StoreAssembly(url: url, connections: writers + 4, masterKey: try benchMasterKey())
        var policies = Policies.standard
        policies.scryptLogN = 4
        let service = try assembly.accounts(policies: policies)
        let (client, store) = (assembly.client, assembly.store)
        let accounts = try await client.query(
            "SELECT stream_id FROM stream_catalog WHERE stream_type = 'account' ORDER BY random() LIMIT 10000"
        ).rows.compactMap { try $0.uuid(0) }
        guard !accounts.isEmpty else { throw ValidationError("no accounts: run `ledger-bench history` first") }
        let events = try await client.query("SELECT count(*) FROM events")[0].int(0) ?? 0

        let baseline = try await CommandLoad(service: service, accounts: accounts, writers: writers).run {
            try await Task.sleep(for: .seconds(baselineSeconds))
        }
        let last = Mutex(AccountProjections.Progress())
        var rebuildTime = Duration.zero
        let during = try await CommandLoad(service: service, accounts: accounts, writers: writers).run {
            let started = ContinuousClock.now
            try await AccountProjections.rebuild(store: store) { progress in last.withLock { $0 = progress } }
            rebuildTime = ContinuousClock.now - started
        }
        let progress = last.withLock { $0 }
        print(
            String(
                format:
                    "bench rebuild events=%d streams=%d seconds=%.2f events_per_s=%.0f catch_up_rounds=%d streams_caught_up=%d lock_held_ms=%.1f swap_retries=%d",
                events, progress.streamsDone, rebuildTime.inSeconds, Double(progress.events) / rebuildTime.inSeconds,
                progress.catchUpRounds, progress.streamsCaughtUp, progress.lockHeld?.inMilliseconds ?? .nan, progress.swapRetries))
        for (label, run) in [("without a rebuild", baseline), ("during the rebuild", during)] {
            let latencies = Latencies(run.latencies)
            print(
                String(
                    format: "bench rebuild commands %@: writers=%d commands=%d per_s=%.0f p50_ms=%.1f p99_ms=%.1f longest_ms=%.1f",
                    label, writers, latencies.count, Double(latencies.count) / run.elapsed.inSeconds, latencies.percentile(0.5),
                    latencies.percentile(0.99), latencies.longest))
        }
        await assembly.resources.shutdown()
    }
}

/// Writers editing profiles of random accounts until the work given to `run` is done.
struct CommandLoad: Sendable {
    let service: AccountService
    let accounts: [UUID]
    let writers: Int

    /// Each command's time, and how long the load ran.
    struct Run: Sendable {
        var latencies: [Duration] = []
        var elapsed = Duration.zero
    }

    func run(while work: () async throws -> Void) async throws -> Run {
        final class Flag: Sendable { let isSet = Atomic<Bool>(false) }
        let stopped = Flag()
        let started = ContinuousClock.now
        return try await withThrowingTaskGroup(of: [Duration].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var latencies: [Duration] = []
                    var round = 0
                    while !stopped.isSet.load(ordering: .relaxed) {
                        round += 1
                        let accountID = accounts[(writer * 7919 + round * writers) % accounts.count]
                        let began = ContinuousClock.now
                        _ = try await service.updateProfile(accountID, displayName: .some("Bench \(writer).\(round)"), handle: nil)
                        latencies.append(ContinuousClock.now - began)
                    }
                    return latencies
                }
            }
            do {
                try await work()
            } catch {
                stopped.isSet.store(true, ordering: .relaxed)
                throw error
            }
            stopped.isSet.store(true, ordering: .relaxed)
            var run = Run()
            for try await latencies in group { run.latencies += latencies }
            run.elapsed = ContinuousClock.now - started
            return run
        }
    }
}
