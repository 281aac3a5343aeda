import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

@testable import LedgerAccountsPostgres

/// `ledger projections rebuild` while commands run (docs/operations.md): fresh tables beside the
/// live ones, caught up from the feed, swapped in under a lock that waits at most a moment.
@Suite("Accounts: projections rebuild while the service runs", .timeLimit(.minutes(10)))
struct OnlineRebuildTests {
    /// What every rebuild reported last, and how often it reported.
    final class Reports: Sendable {
        private let last = Mutex<[AccountProjections.Progress]>([])
        var all: [AccountProjections.Progress] { last.withLock { $0 } }
        func record(_ progress: AccountProjections.Progress) { last.withLock { $0.append(progress) } }
        var latest: AccountProjections.Progress? { all.last }
    }

    /// A switch the writers poll.
    final class Switch: Sendable {
        private let on = Atomic<Bool>(false)
        private let counted = Atomic<Int>(0)
        var isOn: Bool { on.load(ordering: .relaxed) }
        func turnOn() { on.store(true, ordering: .relaxed) }
        func count() { counted.add(1, ordering: .relaxed) }
        var commands: Int { counted.load(ordering: .relaxed) }
    }

    /// The rows every projection holds, as text, with the operational client address of code
    /// requests too (a rebuild carries it over from the live table).
    static func dump(_ db: TestDatabase) async throws -> [String] {
        var lines: [String] = []
        for (table, order) in [
            ("accounts", "account_id"), ("sessions", "session_id"), ("spent_refresh_tokens", "refresh_token_sha256"),
            ("email_links", "token_sha256"), ("otp_requests", "request_id"), ("signup_cooldowns", "key_hmac"),
            ("hold_lapses", "account_id, ref"),
        ] {
            let rows = try await db.client.query("SELECT to_jsonb(t)::text FROM \(table) t ORDER BY \(order)")
            lines += rows.rows.map { "\(table): \($0.string(0) ?? "")" }
        }
        return lines
    }

    static func leftoverSchemas(_ db: TestDatabase) async throws -> [String] {
        try await db.client.query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'public\\_%' ORDER BY 1").rows.compactMap {
            $0.string(0)
        }
    }

    struct Fixture {
        let db: TestDatabase
        let store: EventStore
        let service: AccountService
        let otp: OTPService

        init(_ db: TestDatabase) throws {
            self.db = db
            store = db.eventStore()
            let environment = try db.accountsEnvironment(store)
            service = AccountService(environment: environment)
            otp = db.otpService(store, environment: environment)
        }

        /// One writer's commands, round after round, until `stop`: new accounts, sessions started,
        /// refreshed and ended, reset links, code requests from a client address, and handles
        /// from a small pool moving between accounts (unique claims given up and taken).
        func write(writer: Int, seeded: [UUID], until stop: Switch) async throws {
            var round = 0
            // The previous round's session and reset link, used a round later: a refresh that
            // spends a token an earlier round stored, and a link an earlier round indexed.
            var earlier: (refreshToken: String, email: String)?
            while !stop.isOn {
                round += 1
                let email = "w\(writer)-\(round)@example.com"
                let session = try await service.signUp(
                    email: email, password: "violet-harbor-91", displayName: nil, handle: nil, device: "ios")
                for accountID in [session.accountID, seeded[(writer + round) % seeded.count]] {
                    _ = try? await service.updateProfile(accountID, displayName: .some("n\(round)"), handle: "pool\(round % 5)")
                }
                let again = try await service.signIn(email: email, password: "violet-harbor-91", device: "web")
                let refreshed = try await service.refresh(again.refreshToken)
                if let earlier {
                    _ = try await service.refresh(earlier.refreshToken)
                    let reset = try await db.client.query(
                        "SELECT token FROM outbox WHERE recipient = $1 AND template = 'password_reset'", [.text(earlier.email)])
                    try await service.resetPassword(token: try #require(reset[0].string(0)), newPassword: "amber-meadow-42")
                }
                earlier = (refreshed.refreshToken, email)
                try await service.forgotPassword(email: email)
                try await service.revoke(session: SessionRef(accountID: session.accountID, sessionID: session.sessionID), reason: "logout")
                _ = try? await otp.request(
                    phone: "+995511\(writer)\(String(format: "%05d", round))", country: nil, purpose: "sign_in", session: nil,
                    reauthToken: nil, client: "198.51.100.\(writer)")
                stop.count()
            }
        }

        func seed(_ count: Int) async throws -> [UUID] {
            var seeded: [UUID] = []
            for index in 0..<count {
                seeded.append(
                    try await service.signUp(
                        email: "seed\(index)@example.com", password: "violet-harbor-91", displayName: "Seed", handle: nil, device: nil
                    ).accountID)
            }
            return seeded
        }
    }

    @Test("rebuilds under concurrent writers equal a quiet rebuild; every command succeeds; nothing is left beside the tables")
    func rebuildUnderConcurrentWrites() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try Fixture(db)
            let seeded = try await fixture.seed(30)
            let indexesBefore = try await ProjectionRebuildTests.indexes(db)
            let stop = Switch()
            let reports = Reports()
            // Small batches and small rounds: the load takes many round trips, and the catch-up
            // runs several rounds, while six writers commit.
            var policy = AccountProjections.SwapPolicy()
            policy.smallRound = 200
            policy.maximumRounds = 4
            // Correctness, not timing, is what this test checks: generous waits, so a loaded
            // machine does not make the swap give up.
            policy.lockWait = .seconds(1)
            policy.budget = .seconds(5)
            policy.stallLimit = .seconds(10)
            policy.attempts = 100
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<6 { group.addTask { try await fixture.write(writer: writer, seeded: seeded, until: stop) } }
                while stop.commands < 6 { try await Task.sleep(for: .milliseconds(10)) }
                for _ in 0..<3 {
                    try await AccountProjections.rebuild(store: fixture.store, streamsPerRead: 4, swap: policy) { reports.record($0) }
                }
                let during = stop.commands
                // Commands after the last swap write into the tables it swapped in.
                while stop.commands < during + 6 { try await Task.sleep(for: .milliseconds(10)) }
                stop.turnOn()
                try await group.waitForAll()
            }
            let swaps = reports.all.filter { $0.lockHeld != nil }
            #expect(swaps.count == 3)
            #expect(swaps.reduce(0) { $0 + $1.streamsCaughtUp } > 0, "writers committed while the rebuilds loaded")
            let continued = try await Self.dump(db)
            // Every code request came from a client address, which no event holds: each rebuild
            // carried them over, those caught up included.
            let requests = continued.filter { $0.hasPrefix("otp_requests") }
            #expect(!requests.isEmpty && requests.allSatisfy { $0.contains("\"client_address\": \"198.51.100.") })
            // The swapped tables, kept up by the incremental path since, are what a rebuild of
            // the same streams with nobody writing gives.
            try await AccountProjections.rebuild(store: fixture.store)
            let quiet = try await Self.dump(db)
            #expect(continued.count == quiet.count)
            #expect(Set(quiet).subtracting(continued).sorted().prefix(3) == [], "rows a quiet rebuild has that the swapped tables lack")
            #expect(Set(continued).subtracting(quiet).sorted().prefix(3) == [], "rows the swapped tables have that a quiet rebuild lacks")
            #expect(try await ProjectionRebuildTests.indexes(db) == indexesBefore)
            #expect(try await Self.leftoverSchemas(db).isEmpty)
        }
    }

    @Test("a command that waits on the swap writes into the swapped-in tables: a sign-out then is kept, its token refused")
    func commandWaitingOnTheSwap() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try Fixture(db)
            let session = try await fixture.service.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let signOut = Mutex<Task<Void, any Error>?>(nil)
            var policy = AccountProjections.SwapPolicy()
            policy.budget = .seconds(20)
            let (service, url) = (fixture.service, db.url)
            policy.whileLocked = {
                // Under the swap's locks: a sign-out starts, and waits for them.
                let task = Task {
                    try await service.revoke(
                        session: SessionRef(accountID: session.accountID, sessionID: session.sessionID), reason: "logout")
                }
                signOut.withLock { $0 = task }
                let watcher = PostgresClient(configuration: .init(url: url, maximumConnections: 1))
                while try await watcher.query("SELECT count(*) FROM pg_locks WHERE NOT granted")[0].int(0) == 0 {
                    try await Task.sleep(for: .milliseconds(5))
                }
                await watcher.shutdown()
            }
            try await AccountProjections.rebuild(store: fixture.store, swap: policy)
            try await signOut.withLock { $0 }?.value
            let revoked = try await db.client.query(
                "SELECT revoked_at IS NOT NULL FROM sessions WHERE session_id = $1", [.uuid(session.sessionID)])
            #expect(try revoked[0].bool(0) == true)
            #expect(try await fixture.service.authenticate(accessToken: session.accessToken) == nil)
            let continued = try await Self.dump(db)
            try await AccountProjections.rebuild(store: fixture.store)
            #expect(try await Self.dump(db) == continued)
        }
    }

    /// A stream folded on from a kept state has its rows upserted; its old `accounts` row goes
    /// first, or a claim it gave up would meet the insert of the account that took it.
    @Test("two accounts that swap handles between catch-up rounds: the round after folds both on from their kept states, with no clash")
    func handlesSwappedBetweenRounds() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try Fixture(db)
            let seeded = try await fixture.seed(2)
            let (first, second) = (seeded[0], seeded[1])
            _ = try await fixture.service.updateProfile(first, displayName: nil, handle: "left_hand")
            _ = try await fixture.service.updateProfile(second, displayName: nil, handle: "right_hand")
            let rounds = Atomic<Int>(0)
            let service = fixture.service
            var policy = AccountProjections.SwapPolicy()
            // Generous waits: a swap that gives way on a loaded machine runs another round
            // before its next try, which may fold the swap without the lock.
            policy.lockWait = .seconds(1)
            policy.budget = .seconds(5)
            policy.stallLimit = .seconds(10)
            policy.attempts = 100
            policy.afterRound = {
                switch rounds.add(1, ordering: .relaxed).newValue {
                case 1:
                    // Changed after the first round: the next folds both whole and keeps their states.
                    for account in [first, second] { _ = try await service.updateProfile(account, displayName: .some("kept"), handle: nil) }
                case 2:
                    // Then they swap handles: the last round (under the locks) folds both on from
                    // the kept states; whichever is written first takes the other's old handle.
                    _ = try await service.updateProfile(first, displayName: nil, handle: "in_between")
                    _ = try await service.updateProfile(second, displayName: nil, handle: "left_hand")
                    _ = try await service.updateProfile(first, displayName: nil, handle: "right_hand")
                default: break
                }
            }
            let reports = Reports()
            try await AccountProjections.rebuild(store: fixture.store, swap: policy) { reports.record($0) }
            #expect(rounds.load(ordering: .relaxed) == 2)
            // The load's round, the one between the hooks, the one under the locks; one more a retry.
            #expect(reports.latest.map { $0.catchUpRounds == 3 + $0.swapRetries } == true)
            // At least the two accounts twice; more when another test's open transaction held the
            // feed's head (the horizon is the cluster's) below the seeds' last events at the start.
            #expect((reports.latest?.streamsCaughtUp ?? 0) >= 4)
            let handles = try await db.client.query(
                "SELECT account_id, handle FROM accounts WHERE handle IS NOT NULL ORDER BY handle")
            #expect(handles.rows.map { $0.string(1) } == ["left_hand", "right_hand"])
            #expect(try handles.rows.map { try $0.uuid(0) } == [second, first])
            let swapped = try await Self.dump(db)
            try await AccountProjections.rebuild(store: fixture.store)
            #expect(try await Self.dump(db) == swapped)
        }
    }

    @Test("refused before anything is built: a view on a table, a schema of the copies' name it did not make, tables of another owner")
    func refusals() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try Fixture(db)
            _ = try await fixture.seed(1)
            let before = try await Self.dump(db)
            func refused(_ code: ShadowTablesError.Code) async {
                let error = await #expect(throws: ShadowTablesError.self) { try await AccountProjections.rebuild(store: fixture.store) }
                #expect(error?.code == code)
            }
            // A view would be left on the retired table, and dropped with it.
            try await db.client.query("CREATE VIEW live_sessions AS SELECT session_id FROM sessions WHERE revoked_at IS NULL")
            await refused(.dependents)
            try await db.client.query("DROP VIEW live_sessions")
            // An operator's own schema is never dropped.
            try await db.client.query("CREATE SCHEMA public_rebuild; CREATE TABLE public_rebuild.notes (note text)")
            await refused(.foreignSchema)
            #expect(try await db.client.query("SELECT count(*) FROM public_rebuild.notes")[0].int(0) == 0)
            try await db.client.query("DROP SCHEMA public_rebuild CASCADE")
            // Copies owned by another role would lock the owner out of its own tables.
            let role = "ledger_owner_\(db.name)"
            try await db.client.query("CREATE ROLE \(role); ALTER TABLE accounts OWNER TO \(role)")
            await refused(.notOwner)
            try await db.client.query("ALTER TABLE accounts OWNER TO postgres; DROP ROLE \(role)")
            #expect(try await Self.dump(db) == before)
            #expect(try await AccountProjections.rebuild(store: fixture.store) == 1)
        }
    }

    @Test(
        "a swap that runs past its budget under the lock rolls back and tries again; one that stalls past the stall limit ends, leaving nothing"
    )
    func swapBudget() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try Fixture(db)
            _ = try await fixture.seed(3)
            let before = try await Self.dump(db)
            // Margins of most of a second either way: the suite runs many tests at once.
            let pauses = Mutex<[Duration]>([.milliseconds(1_400)])
            var policy = AccountProjections.SwapPolicy()
            policy.budget = .seconds(1)
            policy.stallLimit = .seconds(2)
            policy.whileLocked = {
                if let pause = pauses.withLock({ $0.popLast() }) { try await Task.sleep(for: pause) }
            }
            let reports = Reports()
            // 1.4 s under a 1 s budget: rolled back, then the second try swaps.
            try await AccountProjections.rebuild(store: fixture.store, swap: policy) { reports.record($0) }
            #expect(reports.latest?.swapRetries == 1)
            #expect(reports.latest.flatMap(\.lockHeld).map { $0 < .seconds(1) } == true)
            #expect(try await Self.dump(db) == before)
            // 3 s, past the stall limit: the server ends the stalled session; the live tables
            // stay, the copies go.
            pauses.withLock { $0 = [.seconds(3)] }
            policy.attempts = 1
            await #expect(throws: (any Error).self) { try await AccountProjections.rebuild(store: fixture.store, swap: policy) }
            #expect(try await Self.dump(db) == before)
            #expect(try await Self.leftoverSchemas(db).isEmpty)
            #expect(try await AccountProjections.rebuild(store: fixture.store) == 3)
        }
    }

    @Test("with a pool of one connection, a rebuild whose session died still cleans up (on the connection it gave back)")
    func deadSessionPoolOfOne() async throws {
        try await TestPostgres.withDatabase(maximumConnections: 1) { db in
            let fixture = try Fixture(db)
            _ = try await fixture.seed(2)
            var policy = AccountProjections.SwapPolicy()
            policy.budget = .seconds(1)
            policy.stallLimit = .seconds(1)
            policy.attempts = 1
            policy.whileLocked = { try await Task.sleep(for: .seconds(2)) }
            await #expect(throws: (any Error).self) { try await AccountProjections.rebuild(store: fixture.store, swap: policy) }
            #expect(try await Self.leftoverSchemas(db).isEmpty)
            #expect(try await AccountProjections.rebuild(store: fixture.store) == 2)
        }
    }

    @Test("a swap that cannot lock the tables gives way at once and tries again; commands go on meanwhile")
    func busyTablesGiveWay() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try Fixture(db)
            let seeded = try await fixture.seed(3)
            let reports = Reports()
            let policy = {
                var policy = AccountProjections.SwapPolicy()
                policy.lockWait = .milliseconds(50)
                policy.attempts = 10_000
                return policy
            }()
            let reader = PostgresClient(configuration: .init(url: db.url, maximumConnections: 1))
            defer { Task { await reader.shutdown() } }
            try await reader.withConnection { reading in
                // A reader in a long transaction holds the accounts table (ACCESS SHARE).
                try await reading.query("BEGIN")
                try await reading.query("SELECT count(*) FROM accounts")
                let rebuild = Task {
                    try await AccountProjections.rebuild(store: fixture.store, swap: policy) { reports.record($0) }
                }
                while (reports.latest?.swapRetries ?? 0) < 2 { try await Task.sleep(for: .milliseconds(10)) }
                // A command is not held up behind the waiting swap for longer than its wait.
                _ = try await fixture.service.updateProfile(seeded[0], displayName: .some("Changed meanwhile"), handle: nil)
                let retriesAfterCommand = reports.latest?.swapRetries ?? 0
                while (reports.latest?.swapRetries ?? 0) < retriesAfterCommand + 2 { try await Task.sleep(for: .milliseconds(10)) }
                #expect(reports.latest?.lockHeld == nil)
                try await reading.query("ROLLBACK")
                #expect(try await rebuild.value == 3)
            }
            #expect(reports.latest?.lockHeld != nil)
            let name = try await db.client.query("SELECT display_name FROM accounts WHERE account_id = $1", [.uuid(seeded[0])])
            #expect(name[0].string(0) == "Changed meanwhile")
            #expect(try await Self.leftoverSchemas(db).isEmpty)
        }
    }

    @Test("a swap that never gets the tables gives up, changes nothing and leaves nothing behind")
    func swapGivesUp() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try Fixture(db)
            _ = try await fixture.seed(2)
            let before = try await Self.dump(db)
            var policy = AccountProjections.SwapPolicy()
            policy.lockWait = .milliseconds(20)
            policy.attempts = 3
            let reader = PostgresClient(configuration: .init(url: db.url, maximumConnections: 1))
            defer { Task { await reader.shutdown() } }
            try await reader.withConnection { reading in
                try await reading.query("BEGIN")
                try await reading.query("SELECT count(*) FROM sessions")
                let failure = await #expect(throws: AccountProjections.SwapGaveUp.self) {
                    try await AccountProjections.rebuild(store: fixture.store, swap: policy)
                }
                #expect(failure?.attempts == 3)
                try await reading.query("ROLLBACK")
            }
            #expect(try await Self.dump(db) == before)
            #expect(try await Self.leftoverSchemas(db).isEmpty)
        }
    }

    @Test("one rebuild at a time, and none during a migration: refused at once, nothing changed")
    func oneAtATime() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try Fixture(db)
            _ = try await fixture.seed(1)
            let other = PostgresClient(configuration: .init(url: db.url, maximumConnections: 1))
            defer { Task { await other.shutdown() } }
            try await other.withConnection { running in
                try await running.query("SELECT pg_advisory_lock(hashtextextended('ledger.shadow-tables', 0))")
                await #expect(throws: ShadowTablesError.self) {
                    try await AccountProjections.rebuild(store: fixture.store)
                }
                try await running.query("SELECT pg_advisory_unlock(hashtextextended('ledger.shadow-tables', 0))")
                // A migration holds its lock: no rebuild copies tables it may be changing.
                try await running.query("SELECT pg_advisory_lock($1)", [.int(SchemaMigrator.lockKey)])
                await #expect(throws: ShadowTablesError.self) {
                    try await AccountProjections.rebuild(store: fixture.store)
                }
                try await running.query("SELECT pg_advisory_unlock($1)", [.int(SchemaMigrator.lockKey)])
            }
            #expect(try await AccountProjections.rebuild(store: fixture.store) == 1)
        }
    }
}
