import AsyncHTTPClient
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import LedgerTestSupport
import NIOCore
import NIOFoundationCompat
import Testing

/// The purge with several `ledger serve` processes on one database (docs/operations.md, the
/// purge's leadership): one leads, another takes over after `kill -9`, and
/// `ledger purge` does what the leader's passes do.
@Suite("Purge leadership across `ledger serve` processes", .serialized, .timeLimit(.minutes(10)))
struct PurgeLeadershipFaultTests {
    static let takeoverSeconds = 2

    /// Small intervals, and one master key for every process of the test.
    static func environment(masterKey: String, _ extra: [String: String] = [:]) -> [String: String] {
        [
            "LEDGER_MASTER_KEY": masterKey, "LEDGER_PURGE_INTERVAL_SECONDS": "1",
            "LEDGER_PURGE_TAKEOVER_SECONDS": String(takeoverSeconds), "LEDGER_PURGE_AFTER_SECONDS": "4",
        ].merging(extra) { $1 }
    }

    /// Runs `body` with servers started on one database, and stops them whatever happens.
    static func withServers(
        _ count: Int, databaseURL: String, environment: [String: String], options: [String] = [],
        _ body: ([ServerUnderTest]) async throws -> Void
    ) async throws {
        var servers: [ServerUnderTest] = []
        do {
            for _ in 0..<count {
                let server = try ServerUnderTest(databaseURL: databaseURL, environment: environment)
                servers.append(server)
                try await server.start(options)
            }
            try await body(servers)
        } catch {
            for server in servers { try? await server.shutdown() }
            throw error
        }
        for server in servers { try await server.shutdown() }
    }

    @Test("exactly one instance leads the purge; kill -9 it, and another leads within the takeover bound and purges what fell due")
    func takeover() async throws {
        try await TestPostgres.withDatabase { db in
            let environment = Self.environment(masterKey: try MasterKey.generate().base64)
            try await Self.withServers(2, databaseURL: db.url, environment: environment) { servers in
                // Settled: one leads, the other does not, and it stays so over several ticks.
                try await Self.waitForOneLeader(servers)
                for _ in 0..<10 {
                    let leaders = await servers.asyncMap { await $0.purgeGauges().leader }
                    #expect(leaders.filter { $0 == 1 }.count == 1 && leaders.filter { $0 == 0 }.count == 1, "leaders: \(leaders)")
                    try await Task.sleep(for: .milliseconds(300))
                }
                let leaderIndex = try #require(await servers.asyncMap { await $0.purgeGauges().leader }.firstIndex(of: 1))
                let (leader, survivor) = (servers[leaderIndex], servers[1 - leaderIndex])

                // A deletion whose purge falls due only after the leader is gone.
                let accountID = try await Self.deletedAccount(through: survivor)
                let pending = try await db.client.query(
                    "SELECT purge_after > now() FROM accounts WHERE account_id = $1::uuid", [.text(accountID)])
                try #require(pending.rowCount == 1 && (try pending[0].bool(0)) == true, "the purge was due before the kill")

                await leader.kill()
                let killed = ContinuousClock.now
                var tookOver: Duration?
                while ContinuousClock.now - killed < .seconds(10) {
                    if await survivor.purgeGauges().leader == 1 {
                        tookOver = ContinuousClock.now - killed
                        break
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let handover = try #require(tookOver, "the survivor never took the purge over")
                // The bound itself, plus what seeing it costs a loaded machine: the test reads the
                // survivor's /metrics every 50 ms. `scripts/bench/purge-handover.sh` measures the
                // handover alone (BENCHMARKS.md: within half the bound, every run).
                #expect(handover <= .seconds(Self.takeoverSeconds) + .seconds(1), "took over after \(handover)")

                // The survivor purges the account once it is due (4 s after the deletion).
                let purgedEvent = "SELECT 1 FROM events WHERE stream_id = $1::uuid AND event_type = 'account.purged'"
                let deadline = ContinuousClock.now + .seconds(15)
                var purged = false
                while !purged && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    purged = try await db.client.query(purgedEvent, [.text(accountID)]).rowCount == 1
                }
                #expect(purged, "the due purge was not done by the survivor")
                #expect(try await db.client.query("SELECT 1 FROM accounts WHERE account_id = $1::uuid", [.text(accountID)]).rowCount == 0)
                #expect(await survivor.purgeGauges().oldestDue == 0)
            }
        }
    }

    @Test("ledger purge takes serve's purge lock: a pass leaves the work to the leader, --watch waits and takes over after kill -9")
    func purgeCommandTakesTheLock() async throws {
        try await TestPostgres.withDatabase { db in
            let environment = Self.environment(masterKey: try MasterKey.generate().base64, ["LEDGER_PURGE_AFTER_SECONDS": "3"])
            try await Self.withServers(1, databaseURL: db.url, environment: environment) { servers in
                let server = servers[0]
                try await Self.waitForOneLeader(servers)
                // A watch that would never pause is refused before anything runs.
                let (refused, said) = try await server.ledger(["purge", "--watch", "--interval", "0"])
                #expect(refused != 0 && said.contains("--interval must be at least 1 second"), "\(said)")
                // A pass while serve leads: nothing done here.
                let (status, output) = try await server.ledger(["purge"])
                #expect(status == 0 && output.contains("another process holds the purge lock"), "\(output)")
                #expect(!output.contains("purged 0 account(s)"))
                // --watch waits beside the leader without leading.
                let watcher = try LedgerProcess(
                    ["purge", "--watch", "--interval", "1"], environment: server.environment.merging(["LOG_LEVEL": "info"]) { $1 })
                try await Task.sleep(for: .seconds(Double(Self.takeoverSeconds) * 1.5))
                #expect(!watcher.output.contains("now runs the purge"), "\(watcher.output)")
                #expect(await server.purgeGauges().leader == 1)
                // The leader dies with a purge about to fall due: the watcher takes the lock and purges it.
                let accountID = try await Self.deletedAccount(through: server)
                await server.kill()
                let deadline = ContinuousClock.now + .seconds(20)
                var purged = false
                while !purged && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    purged =
                        try await db.client.query(
                            "SELECT 1 FROM events WHERE stream_id = $1::uuid AND event_type = 'account.purged'", [.text(accountID)]
                        ).rowCount == 1
                }
                #expect(purged, "the watcher never purged: \(watcher.output)")
                #expect(watcher.output.contains("now runs the purge"))
                await watcher.kill(SIGTERM)
                #expect(watcher.output.contains("purge lock released at shutdown"), "\(watcher.output)")
            }
        }
    }

    @Test("serve --no-purge never leads, reports how long the oldest due purge waits, and warns at start when one is a day overdue")
    func noPurge() async throws {
        try await TestPostgres.withDatabase { db in
            let environment = Self.environment(masterKey: try MasterKey.generate().base64, ["LEDGER_PURGE_AFTER_SECONDS": "3600"])
            try await Self.withServers(1, databaseURL: db.url, environment: environment, options: ["--no-purge"]) { servers in
                let server = servers[0]
                let accountID = try await Self.deletedAccount(through: server)
                // As if nothing had purged for two days.
                try await db.client.query(
                    "UPDATE accounts SET purge_after = now() - interval '2 days' WHERE account_id = $1::uuid", [.text(accountID)])
                await server.kill()
                try await server.start(["--no-purge"])
                let output = server.process?.output ?? ""
                #expect(output.contains("purging is off here (--no-purge) and 1 purge(s) are overdue by more than a day"), "\(output)")
                let deadline = ContinuousClock.now + .seconds(10)
                var gauges = await server.purgeGauges()
                while (gauges.oldestDue ?? 0) < 2 * 86_400 && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    gauges = await server.purgeGauges()
                }
                #expect(gauges.leader == 0)
                #expect((gauges.oldestDue ?? 0) >= 2 * 86_400, "oldest due: \(String(describing: gauges.oldestDue))")
                // Nothing here purges it; `ledger purge` does.
                #expect(try await db.client.query("SELECT 1 FROM accounts WHERE account_id = $1::uuid", [.text(accountID)]).rowCount == 1)
                let (status, purgeOutput) = try await server.ledger(["purge"])
                #expect(status == 0, "\(purgeOutput)")
                #expect(purgeOutput.contains("purged 1 account(s)"))
                #expect(try await db.client.query("SELECT 1 FROM accounts WHERE account_id = $1::uuid", [.text(accountID)]).rowCount == 0)
            }
        }
    }

    @Test("ledger purge schedules a deletion Apple asked for once its hold lapsed; without LEDGER_MASTER_KEY it says why it does not")
    func purgeCommandSchedulesRequestedDeletion() async throws {
        try await TestPostgres.withDatabase { db in
            let masterKey = try MasterKey.generate()
            let accountID = try await Self.appleDeletionBlockedByHold(db, masterKey: masterKey, holdLapsesIn: 3)
            let base = ["DATABASE_URL": db.url, "LEDGER_PURGE_AFTER_SECONDS": "3600", "LOG_LEVEL": "warning"]
            func state() async throws -> (requested: Bool, deleted: Bool, purgeDelay: Double?) {
                let row = try await db.client.query(
                    """
                    SELECT deletion_requested_at IS NOT NULL, deleted_at IS NOT NULL, extract(epoch FROM purge_after - deleted_at)::float8
                    FROM accounts WHERE account_id = $1
                    """, [.uuid(accountID)])[0]
                return (try row.bool(0) == true, try row.bool(1) == true, row.string(2).flatMap(Double.init))
            }
            #expect(try await state() == (true, false, nil))

            let dryRun = try await LedgerProcess.run(["purge", "--dry-run"], environment: base.merging(["LEDGER_MASTER_KEY": ""]) { $1 })
            #expect(dryRun.status == 0 && dryRun.output.contains("1 requested deletion(s) waiting for their holds"), "\(dryRun.output)")
            try await Task.sleep(for: .seconds(3.5))

            // The hold has lapsed, but without the key nothing can be scheduled: it says so, and purges the rest.
            let keyless = try await LedgerProcess.run(
                ["purge", "--report-threads"], environment: base.merging(["LEDGER_MASTER_KEY": ""]) { $1 })
            #expect(keyless.status == 0, "\(keyless.output)")
            #expect(keyless.output.contains("pool threads left: 0"), "\(keyless.output)")
            #expect(keyless.output.contains("requested deletions: not scheduled here (1 waiting): LEDGER_MASTER_KEY is not set"))
            #expect(try await state() == (true, false, nil))

            // Another key than the store's is refused, as serve refuses it.
            let wrong = try await LedgerProcess.run(
                ["purge"], environment: base.merging(["LEDGER_MASTER_KEY": try MasterKey.generate().base64]) { $1 })
            #expect(wrong.status != 0 && wrong.output.contains("refusing to purge"), "\(wrong.output)")
            #expect(try await state() == (true, false, nil))

            // With the key it builds everything a pass can use (the pool, the accounts and their
            // hashing thread), and ends with none of their threads left.
            let keyed = try await LedgerProcess.run(
                ["purge", "--report-threads"], environment: base.merging(["LEDGER_MASTER_KEY": masterKey.base64]) { $1 })
            #expect(keyed.status == 0, "\(keyed.output)")
            #expect(keyed.output.contains("pool threads left: 0"), "\(keyed.output)")
            let scheduled = try await state()
            // LEDGER_PURGE_AFTER_SECONDS from the scheduling: `purge_after` is written to the second,
            // `deleted_at` is the commit's time to the microsecond.
            #expect(scheduled.deleted && abs((scheduled.purgeDelay ?? 0) - 3600) < 1, "\(scheduled)")
            let types = try await db.client.query(
                "SELECT event_type FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1", [.uuid(accountID)])
            #expect(types[0].string(0) == "account.deletion_scheduled")
        }
    }

    // MARK: Helpers

    /// Waits until exactly one server reports `ledger_purge_leader 1` and the rest 0.
    static func waitForOneLeader(_ servers: [ServerUnderTest]) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        var leaders: [Double?] = []
        while ContinuousClock.now < deadline {
            leaders = await servers.asyncMap { await $0.purgeGauges().leader }
            if leaders.filter({ $0 == 1 }).count == 1 && leaders.filter({ $0 == 0 }).count == servers.count - 1 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw FaultRunFailure("no single purge leader emerged: \(leaders)")
    }

    /// Signs an account up through `server`, re-authenticates by password and deletes it; its id.
    static func deletedAccount(through server: ServerUnderTest) async throws -> String {
        let password = "amber-orchard-59"
        let signUp = try await server.send(
            "POST", "/auth/email/signup", json: ["email": "purge-\(UUID().uuidString.prefix(8))@example.net", "password": password])
        guard signUp.status == 201, let access = signUp.json?["access_token"] as? String,
            let accountID = signUp.json?["account_id"] as? String
        else { throw FaultRunFailure("sign-up answered \(signUp.status)") }
        let reauth = try await server.send("POST", "/auth/reauth/password", json: ["password": password], token: access)
        guard let grant = reauth.json?["reauth_token"] as? String else { throw FaultRunFailure("re-auth answered \(reauth.status)") }
        var request = HTTPClientRequest(url: server.baseURL + "/me")
        request.method = .init(rawValue: "DELETE")
        request.headers.add(name: "Authorization", value: "Bearer \(access)")
        request.headers.add(name: "X-Reauth-Token", value: grant)
        let response = try await server.http.execute(request, timeout: .seconds(10))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status.code == 202 else { throw FaultRunFailure("DELETE /me answered \(response.status.code)") }
        return accountID
    }

    /// An account linked to Apple whose Apple account-delete came while an upcoming session
    /// held it (so it was only disabled), the session starting `holdLapsesIn` seconds from now;
    /// made in this process with the store's master key, as `serve` would have made it.
    static func appleDeletionBlockedByHold(_ db: TestDatabase, masterKey: MasterKey, holdLapsesIn seconds: Double) async throws -> UUID {
        // The `ledger` processes read the real time: so must the events they will decide on.
        let clock = SystemClock()
        let store = EventStore(client: db.client, keyring: SubjectKeyring(masterKey: masterKey), clock: clock)
        let environment = AccountsEnvironment.postgres(
            store: store, clock: clock, policies: .standard, retention: .development,
            hasher: try PasswordHasher(parameters: Scrypt(logN: 4)))
        let repository = environment.repository
        let accounts = AccountService(environment: environment)
        let session = try await accounts.signUp(
            email: "requested-\(UUID().uuidString.prefix(8))@example.net", password: "amber-orchard-59", displayName: nil, handle: nil,
            device: nil)
        let accountID = session.accountID
        _ = try await repository.execute(accountID) { _ in
            .linkProvider(
                .init(provider: .apple, subject: "a-fault", email: nil, emailVerified: false), sessionID: nil, reauthTokenHash: nil)
        }
        try await accounts.placeHold(accountID, Hold(ref: "s1", kind: .upcomingSession, startsAt: Date().addingTimeInterval(seconds)))
        _ = try await repository.execute(accountID) { _ in
            .handleAppleNotification(AppleNotice(id: "n-fault", kind: .accountDelete, subject: "a-fault", eventTime: nil))
        }
        #expect(try await accounts.account(accountID).isDisabled)
        return accountID
    }
}

extension ServerUnderTest {
    /// `ledger_purge_leader` and `ledger_purge_oldest_due_seconds` as `/metrics` shows them now
    /// (nil: not shown, or the server does not answer).
    func purgeGauges() async -> (leader: Double?, oldestDue: Double?) {
        guard let reply = try? await send("GET", "/metrics"), reply.status == 200 else { return (nil, nil) }
        let text = String(decoding: reply.body, as: UTF8.self)
        func gauge(_ name: String) -> Double? {
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
        }
        return (gauge("ledger_purge_leader"), gauge("ledger_purge_oldest_due_seconds"))
    }
}

extension Array {
    /// `map` with an async transform, one element after the other.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var mapped: [T] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
