import Foundation
import LedgerPostgres
import LedgerTestSupport
import Testing

/// Fault runs on loopback, each bounded to a few seconds of load: the service and PostgreSQL
/// die or restart mid-write, and afterwards every acknowledged write is there exactly once,
/// retries store nothing twice, and every hash chain verifies.
@Suite("Fault runs", .serialized)
struct FaultRunTests {
    /// Checks common to every run, after the retries.
    static func expectEveryWriteOnce(_ load: HoldWriteLoad, server: ServerUnderTest) async throws {
        let tally = load.snapshot
        let auditKey = try await server.createKey(scopes: "audit:read")
        let recorded = try await load.recordedHolds(auditKey: auditKey)
        let attempted = Set(tally.attempted.map { "\($0.accountID)/\($0.ref)" })
        for write in tally.acknowledged {
            #expect(recorded["\(write.accountID)/\(write.ref)"] != nil, "acknowledged hold \(write.ref) is missing")
        }
        let duplicated = recorded.filter { $0.value != 1 }
        #expect(duplicated.isEmpty, "holds stored more than once: \(duplicated.prefix(5))")
        #expect(Set(recorded.keys) == attempted, "stored holds differ from the writes sent")

        let (status, output) = try await server.ledger(["verify"])
        #expect(status == 0, "ledger verify failed: \(output.suffix(1000))")
        #expect(output.contains("0 broken"))
    }

    /// Runs `body` with a started server holding four accounts and a hold load ready to run
    /// against it, and shuts the server down afterwards, also when `body` throws: a failing
    /// run must stay a failure, not end the test process in HTTPClient's deinit check.
    static func withServerAndLoad(
        databaseURL: String, _ body: (ServerUnderTest, HoldWriteLoad) async throws -> Void
    ) async throws {
        let server = try ServerUnderTest(databaseURL: databaseURL)
        do {
            try await server.start()
            let apiKey = try await server.createKey(scopes: "holds:write")
            var accounts: [String] = []
            for number in 0..<4 { accounts.append(try await server.signUp(number)) }
            try await body(server, HoldWriteLoad(server: server, apiKey: apiKey, accounts: accounts))
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    @Test("kill -9 of the server during writes: acknowledged writes survive once, retries add nothing", .timeLimit(.minutes(10)))
    func serverKilledDuringWrites() async throws {
        try await TestPostgres.withDatabase { db in
            try await Self.withServerAndLoad(databaseURL: db.url) { server, load in
                let writing = Task { await load.run(writers: 8, untilUnreachable: true) }
                try await load.waitForAcknowledgements(150)
                await server.kill()
                await writing.value
                let beforeRestart = load.snapshot
                #expect(beforeRestart.unexpected.isEmpty, "unexpected answers: \(beforeRestart.unexpected.prefix(3))")
                #expect(beforeRestart.connectionErrors > 0, "the kill cut no request off")

                try await server.start()
                try await load.retryAll()
                try await Self.expectEveryWriteOnce(load, server: server)
            }
        }
    }

    @Test("PostgreSQL restarted during writes: only 503s meanwhile, then every write lands once", .timeLimit(.minutes(10)))
    func postgresRestartedDuringWrites() async throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ledger-fault-\(UUID().uuidString)")
        let cluster = try await LocalCluster.start(directory: directory, database: "ledger", durable: false)
        defer { cluster.stop() }
        let (migrated, migrateOutput) = try await LedgerProcess.run(["migrate"], environment: ["DATABASE_URL": cluster.url])
        try #require(migrated == 0, "ledger migrate failed: \(migrateOutput)")

        try await Self.withServerAndLoad(databaseURL: cluster.url) { server, load in
            let writing = Task { await load.run(writers: 8, untilUnreachable: false) }
            try await load.waitForAcknowledgements(100)
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                Thread.detachNewThread { continuation.resume(with: Result { try cluster.restart() }) }
            }
            let acknowledgedAtRestart = load.snapshot.acknowledged.count
            try await load.waitForAcknowledgements(acknowledgedAtRestart + 100)
            load.stop()
            await writing.value

            let tally = load.snapshot
            #expect(tally.unexpected.isEmpty, "answers other than 200 and 503: \(tally.unexpected.prefix(3))")
            #expect(tally.connectionErrors == 0, "the server dropped connections while PostgreSQL restarted")
            try await load.retryAll()
            try await Self.expectEveryWriteOnce(load, server: server)
        }
    }

    @Test("kill -9 of a writer appending with its own event ids: a rerun replays them, nothing is stored twice", .timeLimit(.minutes(10)))
    func writerKilledThenRetriedWithSameEventIDs() async throws {
        try await TestPostgres.withDatabase { db in
            let ackLog = NSTemporaryDirectory() + "ledger-acks-\(UUID().uuidString).log"
            defer { unlink(ackLog) }
            let environment = ["DATABASE_URL": db.url]
            let arguments = [
                "dev", "append-load", "--seed", "fault-run", "--streams", "16", "--events-per-stream", "60",
                "--writers", "8", "--ack-log", ackLog,
            ]

            let writer = try LedgerProcess(arguments, environment: environment)
            let deadline = ContinuousClock.now + .seconds(60)
            while Self.lines(ackLog).count < 200 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            await writer.kill(SIGKILL)
            let acknowledgedBeforeKill = Self.lines(ackLog)
            try #require(acknowledgedBeforeKill.count >= 200, "the writer acknowledged too little: \(writer.output.suffix(500))")
            try #require(acknowledgedBeforeKill.count < 16 * 60, "the writer finished before it was killed")

            let (status, output) = try await LedgerProcess.run(arguments, environment: environment)
            try #require(status == 0, "the rerun failed: \(output.suffix(1000))")
            // Everything the first run got acknowledged comes back as a replay, not a new event.
            let replayed = try #require(
                output.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("replayed=") }.flatMap { Int($0.dropFirst(9)) })
            #expect(replayed >= acknowledgedBeforeKill.count)

            let rows = try await db.client.query(
                "SELECT count(*), count(DISTINCT event_id), count(DISTINCT (stream_id, stream_version)) FROM events")
            #expect(try rows[0].int(0) == 16 * 60)
            #expect(try rows[0].int(1) == 16 * 60)
            #expect(try rows[0].int(2) == 16 * 60)
            for line in acknowledgedBeforeKill {
                let fields = line.split(separator: " ").map(String.init)
                let stored = try await db.client.query(
                    "SELECT stream_id::text, stream_version FROM events WHERE event_id = $1::uuid", [.text(fields[1])])
                try #require(stored.rowCount == 1, "acknowledged event \(fields[1]) is missing")
                #expect(stored[0].string(0) == fields[0])
                #expect(try stored[0].int(1) == Int64(fields[2]))
            }
            let (verified, verifyOutput) = try await LedgerProcess.run(["verify"], environment: environment)
            #expect(verified == 0, "ledger verify failed: \(verifyOutput.suffix(1000))")
        }
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
