import Foundation
import LedgerPostgres
import LedgerTestSupport
import Synchronization
import Testing

@Suite("PostgreSQL client on libpq", .timeLimit(.minutes(10)))
struct ClientTests {
    @Test("a connection error never shows the URL's password: libpq quotes a URI it cannot parse whole")
    func connectionErrorHidesPassword() async throws {
        for url in ["postgres://ledger:s3cretpw@[db/ledger", "host=127.0.0.1 port=1 password=s3cretpw user=ledger connect_timeout=1"] {
            let client = PostgresClient(configuration: .init(url: url, maximumConnections: 1, checkoutTimeout: .seconds(5)))
            do {
                _ = try await client.query("SELECT 1")
                Issue.record("connected to \(url)")
            } catch {
                #expect(!"\(error)".contains("s3cretpw"), "\(error)")
                #expect("\(error)".contains("cannot connect to PostgreSQL"), "\(error)")
            }
            await client.shutdown()
        }
    }

    @Test("a failed connection proves no server can commit only when libpq tried every host and each refused or is a standby")
    func noServerCanCommit() {
        func failure(_ lines: String...) -> PostgresError {
            PostgresError(.connectionFailed, message: "cannot connect to PostgreSQL: " + lines.joined(separator: "\n"))
        }
        let refused =
            "connection to server at \"127.0.0.1\", port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?"
        let standby = "connection to server at \"127.0.0.1\", port 5433 failed: session is read-only"
        let starting = "connection to server at \"127.0.0.1\", port 5434 failed: FATAL:  the database system is starting up"
        let timedOut = "connection to server at \"10.0.0.3\", port 5432 failed: timeout expired"
        let unroutable = "connection to server at \"10.0.0.3\", port 5432 failed: No route to host"
        let full = "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  sorry, too many clients already"
        let unresolved = "could not translate host name \"db1\" to address: Name or service not known"
        let stopping = "connection to server at \"127.0.0.1\", port 5435 failed: FATAL:  the database system is shutting down"
        #expect(failure(refused).showsNoServerCanCommit(hosts: 1))
        #expect(failure(refused, standby, starting).showsNoServerCanCommit(hosts: 3))
        #expect(!failure(refused, standby).showsNoServerCanCommit(hosts: 3))  // a host libpq did not name
        #expect(!failure(refused, timedOut).showsNoServerCanCommit(hosts: 2))
        #expect(!failure(standby, unroutable).showsNoServerCanCommit(hosts: 2))
        #expect(!failure(unresolved, refused).showsNoServerCanCommit(hosts: 1))  // a line without an attempt
        #expect(!failure(stopping).showsNoServerCanCommit(hosts: 1))  // a smart shutdown still commits
        #expect(!failure(full).showsNoServerCanCommit(hosts: 1))
        #expect(!failure(unresolved).showsNoServerCanCommit(hosts: 1))
        #expect(!PostgresError(.poolExhausted, message: "no database connection came free in time").showsNoServerCanCommit(hosts: 1))
        #expect(!PostgresError(.connectionLost, message: refused).showsNoServerCanCommit(hosts: 1))
    }

    @Test("a pool held to one server lends no connection that reached another, and says which it reached")
    func serverPin() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let client = PostgresClient(configuration: .init(url: db.url, maximumConnections: 2))
            let reached = Mutex<[String]>([])
            client.onServerMismatch { server in reached.withLock { $0.append(server) } }
            let server = try #require(try await client.query("SELECT \(PostgresClient.serverIdentityExpression)").rows.first?.string(0))
            client.requireServer(server)
            #expect(try await client.query("SELECT 1").rowCount == 1)
            client.requireServer("192.0.2.1:5432")
            let refused = await #expect(throws: PostgresError.self) { try await client.query("SELECT 1") }
            #expect(refused?.code == .connectionLost && refused?.isTemporarilyUnavailable == true)
            #expect(reached.withLock { $0 } == [server])
            client.requireServer(server)
            #expect(try await client.query("SELECT 1").rowCount == 1)
            await client.shutdown()
        }
    }

    @Test("a connection string's hosts and target_session_attrs, as libpq reads them")
    func connectionTarget() {
        #expect(ConnectionTarget(url: "postgresql://a:1,b:2,c/ledger?target_session_attrs=read-write")?.hosts == ["a", "b", "c"])
        #expect(ConnectionTarget(url: "postgresql://a,b/ledger?target_session_attrs=read-write")?.settlesOnPrimary == true)
        #expect(ConnectionTarget(url: "postgresql://a,b/ledger?target_session_attrs=primary")?.settlesOnPrimary == true)
        #expect(ConnectionTarget(url: "host=a,b dbname=ledger")?.settlesOnPrimary == false)
        #expect(ConnectionTarget(url: "postgresql://a,b/ledger?target_session_attrs=prefer-standby")?.settlesOnPrimary == false)
        #expect(ConnectionTarget(url: "postgresql://one/ledger")?.settlesOnPrimary == true)
        #expect(ConnectionTarget(url: "postgresql://[broken") == nil)
        // serve's pool asks for a primary whenever the string does not say what it wants.
        #expect(ConnectionTarget.requiringPrimary("postgresql://a/ledger") == "postgresql://a/ledger?target_session_attrs=read-write")
        #expect(
            ConnectionTarget.requiringPrimary("postgresql://a/ledger?connect_timeout=2")
                == "postgresql://a/ledger?connect_timeout=2&target_session_attrs=read-write")
        #expect(ConnectionTarget.requiringPrimary("host=a dbname=ledger") == "host=a dbname=ledger target_session_attrs=read-write")
        #expect(
            ConnectionTarget.requiringPrimary("postgresql://a,b/l?target_session_attrs=any")
                == "postgresql://a,b/l?target_session_attrs=any")
        #expect(ConnectionTarget(url: ConnectionTarget.requiringPrimary("postgresql://a/ledger"))?.sessionAttributes == "read-write")
    }

    @Test("parameters are bound, never spliced: SQL in a value is just text")
    func boundParameters() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            try await db.client.query("CREATE TABLE notes (id int PRIMARY KEY, body text, data bytea)")
            let hostile = "x'); DROP TABLE notes; --"
            try await db.client.query("INSERT INTO notes VALUES ($1, $2, $3)", [1, .text(hostile), .bytea([0, 1, 255])])
            let row = try await db.client.query("SELECT body, data, id FROM notes WHERE id = $1", [1])[0]
            #expect(row.string(0) == hostile)
            #expect(try row.bytes(1) == [0, 1, 255])
            #expect(try row.int(2) == 1)
        }
    }

    @Test("errors are typed with their SQLSTATE")
    func typedErrors() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            try await db.client.query("CREATE TABLE uniq (k text PRIMARY KEY)")
            try await db.client.query("INSERT INTO uniq VALUES ($1)", ["ana@example.com"])
            let duplicate = await #expect(throws: PostgresError.self) {
                try await db.client.query("INSERT INTO uniq VALUES ($1)", ["ana@example.com"])
            }
            #expect(duplicate?.code == .uniqueViolation)
            #expect(duplicate?.sqlState == "23505")
            #expect(duplicate?.constraint == "uniq_pkey")
            // The detail quotes the row; what reaches logs (the description) never does.
            #expect(duplicate?.detail?.contains("ana@example.com") == true)
            #expect(duplicate.map { "\($0)" }?.contains("ana@example.com") == false)
            let syntax = await #expect(throws: PostgresError.self) { try await db.client.query("SELEC 1") }
            #expect(syntax?.code == .server)
            #expect(syntax?.sqlState == "42601")
            let lock = await #expect(throws: PostgresError.self) {
                try await db.client.query("DO $$ BEGIN RAISE EXCEPTION 'x' USING ERRCODE = '55P03'; END $$")
            }
            #expect(lock?.code == .lockTimeout)
        }
    }

    @Test(
        "statements awaited on the readiness thread: each caller gets its own answer, several commands the last or the first error, large parameters still run"
    )
    func statementsFromTasks() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            // Hundreds of callers over a handful of connections: after each connection's first
            // (preparing) call, every statement is sent from its task and awaited through epoll.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for value in 0..<400 {
                    group.addTask {
                        let row = try await db.client.query("SELECT $1::bigint * 2, pg_backend_pid()", [.int(Int64(value))])[0]
                        #expect(try row.int(0) == Int64(value) * 2)
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await db.client.query("SELECT 1; SELECT 2")[0].int(0) == 2)
            let second = await #expect(throws: PostgresError.self) { try await db.client.query("SELECT 1; SELEC 2; SELECT 3") }
            #expect(second?.sqlState == "42601")
            #expect(try await db.client.query("SELECT 4")[0].int(0) == 4)
            let large = String(repeating: "ab", count: PostgresConnection.largestSendFromTask)
            for _ in 0..<2 {
                #expect(try await db.client.query("SELECT length($1::text)", [.text(large)])[0].int(0) == Int64(large.utf8.count))
            }
        }
    }

    @Test("a transaction commits on return and rolls back on throw")
    func transactions() async throws {
        struct Abort: Error {}
        try await TestPostgres.withDatabase(migrated: false) { db in
            try await db.client.query("CREATE TABLE t (v int)")
            _ = try await db.client.transaction { try await $0.query("INSERT INTO t VALUES (1)") }
            await #expect(throws: Abort.self) {
                try await db.client.transaction { connection in
                    try await connection.query("INSERT INTO t VALUES (2)")
                    throw Abort()
                }
            }
            #expect(try await db.client.query("SELECT count(*) FROM t")[0].int(0) == 1)
        }
    }

    @Test("serialization failures run the transaction again")
    func serializationRetry() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            try await db.client.query("CREATE TABLE counter (n int); INSERT INTO counter VALUES (0)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await db.client.transaction(isolation: .serializable) { connection in
                            let current = try await connection.query("SELECT n FROM counter")[0].int(0) ?? 0
                            try await connection.query("UPDATE counter SET n = $1", [.int(current + 1)])
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await db.client.query("SELECT n FROM counter")[0].int(0) == 6)
        }
    }

    @Test("the pool never opens more than its maximum, even with many concurrent callers")
    func poolBound() async throws {
        try await TestPostgres.withDatabase(migrated: false, maximumConnections: 3) { db in
            let observed = try await withThrowingTaskGroup(of: Int64.self) { group in
                for _ in 0..<24 {
                    group.addTask {
                        try await db.client.query(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pg_sleep(0.02) IS NOT NULL"
                        )[0].int(0) ?? 0
                    }
                }
                return try await group.reduce(into: [Int64]()) { $0.append($1) }
            }
            #expect(observed.count == 24)
            #expect(observed.allSatisfy { $0 <= 3 })
        }
    }

    @Test("with a checkout timeout, a caller waiting on an exhausted pool gives up with poolExhausted instead of queueing")
    func poolTimeout() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let client = PostgresClient(configuration: .init(url: db.url, maximumConnections: 1, checkoutTimeout: .milliseconds(200)))
            let holder = try await HeldConnection(of: client, watchedThrough: db.client)
            // It fails while the holder still holds the only connection: it did not wait it out.
            let waited = await #expect(throws: PostgresError.self) { try await client.query("SELECT 1") }
            #expect(waited?.code == .poolExhausted)
            try await holder.release()
            // Free again, the pool serves.
            #expect(try await client.query("SELECT 1")[0].int(0) == 1)
            await client.shutdown()
        }
    }

    @Test("callers wait in a bounded queue: past LEDGER_DB_MAX_WAITERS the next fails at once; the queue is served in order")
    func poolQueueBound() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let client = PostgresClient(
                configuration: .init(url: db.url, maximumConnections: 1, checkoutTimeout: .seconds(60), maximumWaiters: 3))
            let holder = try await HeldConnection(of: client, watchedThrough: db.client)
            var waiters: [Task<Int64?, any Error>] = []
            for number in 1...3 {
                waiters.append(Task { try await client.query("SELECT $1::bigint", [.int(Int64(number))])[0].int(0) })
                while client.waitingForConnection < number { try await Task.sleep(for: .milliseconds(5)) }
            }
            // The fourth is refused while the holder still sleeps: it did not queue.
            let refused = await #expect(throws: PostgresError.self) { try await client.query("SELECT 4") }
            #expect(refused?.code == .poolExhausted)
            #expect(client.waitingForConnection == 3)
            try await holder.release()
            var answers: [Int64?] = []
            for waiter in waiters { answers.append(try await waiter.value) }
            #expect(answers == [1, 2, 3])
            #expect(client.waitingForConnection == 0)
            await client.shutdown()
        }
    }

    @Test("many callers timing out together all get poolExhausted, and the pool serves afterwards")
    func poolTimeoutMany() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let client = PostgresClient(configuration: .init(url: db.url, maximumConnections: 1, checkoutTimeout: .milliseconds(200)))
            let holder = try await HeldConnection(of: client, watchedThrough: db.client)
            let codes = await withTaskGroup(of: PostgresError.Code?.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        do {
                            _ = try await client.query("SELECT 1")
                            return nil
                        } catch {
                            return (error as? PostgresError)?.code
                        }
                    }
                }
                return await group.reduce(into: [PostgresError.Code?]()) { $0.append($1) }
            }
            #expect(codes.count == 200 && codes.allSatisfy { $0 == .poolExhausted })
            #expect(client.waitingForConnection == 0)
            try await holder.release()
            #expect(try await client.query("SELECT 1")[0].int(0) == 1)
            await client.shutdown()
        }
    }

    @Test("a connection killed by the server is dropped and replaced")
    func brokenConnectionReplaced() async throws {
        try await TestPostgres.withDatabase(migrated: false, maximumConnections: 1) { db in
            let pid = try await db.client.query("SELECT pg_backend_pid()")[0].int(0)!
            let admin = PostgresClient(configuration: .init(url: try await TestPostgres.url(database: "postgres"), maximumConnections: 1))
            try await admin.query("SELECT pg_terminate_backend($1::int)", [.int(pid)])
            await admin.shutdown()
            try await Task.sleep(for: .milliseconds(100))
            let newPID = try await db.client.query("SELECT pg_backend_pid()")[0].int(0)!
            #expect(newPID != pid)
        }
    }

    @Test("timestamps round-trip at microsecond precision in UTC")
    func timestamps() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let date = Date(timeIntervalSince1970: 1_790_000_000.123456)
            let row = try await db.client.query(
                "SELECT $1::timestamptz, (extract(epoch FROM $1::timestamptz) * 1000000)::bigint", [.timestamp(date)])[0]
            #expect(try row.int(1) == PostgresTimestamp.micros(date))
            #expect(PostgresTimestamp.micros(try row.date(0)!) == PostgresTimestamp.micros(date))
        }
    }

    @Test("LISTEN/NOTIFY wakes a listener")
    func listenNotify() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let listener = PostgresListener(url: db.url, channels: ["ledger_test"])
            let wakeups = listener.wakeups()
            listener.start()
            defer { listener.stop() }
            var iterator = wakeups.makeAsyncIterator()
            _ = await iterator.next()  // the wake-up of the first connect
            try await db.client.query("SELECT pg_notify('ledger_test', '')")
            let woke: Void? = await iterator.next()
            #expect(woke != nil)
        }
    }
}
