import Foundation
import LedgerTestSupport
import Testing

@testable import LedgerPostgres

@Suite("PostgreSQL client: queued statements")
struct PipelineTests {
    struct Translated: Error, Equatable {
        let sqlState: String?
    }

    @Test("queued statements run in order with the next awaited one: one at a time until prepared, then in one pipeline")
    func queuedInOrder() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            try await db.client.query("CREATE TABLE t (n int PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp())")
            var pipelines: [Int] = []
            for round in 0..<2 {
                let seen = try await db.client.transaction { connection in
                    let before = connection.pipelinesSent
                    for n in 1...3 { connection.queue("INSERT INTO t (n) VALUES ($1)", [.int(Int64(round * 10 + n))]) }
                    // The read runs after the queued inserts, in the same transaction.
                    let rows = try await connection.query("SELECT n FROM t WHERE n > $1 ORDER BY at", [.int(Int64(round * 10))])
                    pipelines.append(connection.pipelinesSent - before)
                    return try rows.rows.map { try $0.int(0) }
                }
                #expect(seen == [Int64(round * 10 + 1), Int64(round * 10 + 2), Int64(round * 10 + 3)])
            }
            // The first round prepared the statements one by one; the second sent BEGIN, the
            // three inserts and the read in one pipeline.
            #expect(pipelines == [0, 1])
            #expect(try await db.client.query("SELECT count(*) FROM t")[0].int(0) == 6)
        }
    }

    @Test("a queued statement's failure is thrown by the next call, translated; nothing after it runs and the transaction rolls back")
    func queuedFailure() async throws {
        try await TestPostgres.withDatabase(migrated: false, maximumConnections: 1) { db in
            try await db.client.query("CREATE TABLE t (n int PRIMARY KEY)")
            try await db.client.query("INSERT INTO t VALUES ($1)", [1])
            for _ in 0..<2 {  // unprepared, then pipelined
                let error = await #expect(throws: Translated.self) {
                    try await db.client.transaction { connection in
                        connection.queue("INSERT INTO t VALUES ($1)", [2])
                        connection.queue("INSERT INTO t VALUES ($1)", [1], translate: { Translated(sqlState: $0.sqlState) })
                        connection.queue("INSERT INTO t VALUES ($1)", [3])
                        _ = try await connection.query("SELECT count(*) FROM t WHERE n > $1", [0])
                        Issue.record("the failed insert should have been thrown by the read")
                    }
                }
                #expect(error == Translated(sqlState: "23505"))
            }
            // Rolled back (2 is gone too), and the one connection is back in the pool, usable.
            #expect(try await db.client.query("SELECT array_agg(n ORDER BY n)::text FROM t")[0].string(0) == "{1}")
        }
    }

    @Test("an untranslated failure of a queued statement is marked as such; the awaited statement's own is not")
    func queuedFailureMarked() async throws {
        try await TestPostgres.withDatabase(migrated: false, maximumConnections: 1) { db in
            try await db.client.query("CREATE TABLE t (n int PRIMARY KEY)")
            try await db.client.query("INSERT INTO t VALUES ($1)", [1])
            for _ in 0..<2 {  // unprepared, then pipelined
                let queued = await #expect(throws: PostgresError.self) {
                    try await db.client.transaction { connection in
                        connection.queue("INSERT INTO t VALUES ($1)", [1])
                        _ = try await connection.query("INSERT INTO t VALUES ($1)", [2])
                    }
                }
                #expect(queued?.code == .uniqueViolation)
                #expect(queued?.raisedByQueuedStatement == true)
                let own = await #expect(throws: PostgresError.self) {
                    try await db.client.transaction { connection in
                        connection.queue("INSERT INTO t VALUES ($1)", [3])
                        _ = try await connection.query("INSERT INTO t VALUES ($1)", [1])
                    }
                }
                #expect(own?.code == .uniqueViolation)
                #expect(own?.raisedByQueuedStatement == false)
            }
            #expect(try await db.client.query("SELECT array_agg(n ORDER BY n)::text FROM t")[0].string(0) == "{1}")
        }
    }

    @Test("what is still queued goes out with COMMIT, or when a connection is given back; a body that fails first sends nothing")
    func queuedAtTheEnd() async throws {
        struct Abort: Error {}
        try await TestPostgres.withDatabase(migrated: false, maximumConnections: 1) { db in
            try await db.client.query("CREATE TABLE t (n int PRIMARY KEY)")
            try await db.client.transaction { connection in connection.queue("INSERT INTO t VALUES ($1)", [1]) }
            try await db.client.withConnection { connection in connection.queue("INSERT INTO t VALUES ($1)", [2]) }
            await #expect(throws: Abort.self) {
                try await db.client.transaction { connection in
                    connection.queue("INSERT INTO t VALUES ($1)", [3])
                    throw Abort()
                }
            }
            #expect(try await db.client.query("SELECT array_agg(n ORDER BY n)::text FROM t")[0].string(0) == "{1,2}")
        }
    }

    @Test("a queued lock holds back the read sent with it: the read sees what the lock holder committed")
    func queuedLockThenRead() async throws {
        try await TestPostgres.withDatabase(migrated: false, maximumConnections: 4) { db in
            try await db.client.query("CREATE TABLE t (n int)")
            let holding = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            async let holder: Void = db.client.transaction { connection in
                try await connection.query("SELECT pg_advisory_xact_lock($1)", [.int(7)])
                try await connection.query("INSERT INTO t VALUES ($1)", [1])
                holding.continuation.yield()
                for await _ in release.stream { break }
            }
            for await _ in holding.stream { break }
            async let seen = db.client.transaction { connection in
                // Once with another key, so both statements are prepared on this connection.
                connection.queue("SELECT pg_advisory_xact_lock($1)", [.int(8)])
                _ = try await connection.query("SELECT count(*) FROM t WHERE n > $1", [0])
                let before = connection.pipelinesSent
                connection.queue("SELECT pg_advisory_xact_lock($1)", [.int(7)])
                let count = try await connection.query("SELECT count(*) FROM t WHERE n > $1", [0])[0].int(0)
                return (count, connection.pipelinesSent - before)
            }
            // The reader waits on the lock until the holder commits.
            var waited = false
            for _ in 0..<200 where !waited {
                let waiting = try await db.client.query(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1", [.int(7)])
                waited = try waiting[0].int(0) == 1
                if !waited { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(waited)
            release.continuation.yield()
            try await holder
            let (count, pipelines) = try await seen
            #expect(count == 1)
            #expect(pipelines == 1)
        }
    }

    @Test("a lost connection is replayed only when nothing sent can have committed: a transaction, or a session the server ended itself")
    func replayOnlyTransactions() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let lone = try await db.client.withConnection { connection in
                try await connection.query("SELECT 1")
                return connection.checkoutOpenedTransaction
            }
            let transaction = try await db.client.transaction { connection in
                try await connection.query("SELECT 1")
                return connection.checkoutOpenedTransaction
            }
            #expect(lone == false && transaction == true)
            let lost = PostgresError(.connectionLost, message: "server closed the connection unexpectedly")
            #expect(PostgresClient.mayReplay(lost, completedStatements: 0, openedTransaction: true))
            #expect(!PostgresClient.mayReplay(lost, completedStatements: 0, openedTransaction: false))
            // The server's own FATAL (an idle session ended at shutdown): the statement never ran.
            let ended = PostgresError(.connectionLost, sqlState: "57P01", message: "terminating connection due to administrator command")
            #expect(PostgresClient.mayReplay(ended, completedStatements: 0, openedTransaction: false))
            let fatal = PostgresError(.connectionLost, message: "FATAL:  terminating connection due to administrator command")
            #expect(PostgresClient.mayReplay(fatal, completedStatements: 0, openedTransaction: false))
            #expect(!PostgresClient.mayReplay(lost, completedStatements: 0, openedTransaction: nil))
            #expect(!PostgresClient.mayReplay(lost, completedStatements: 1, openedTransaction: true))
            #expect(!PostgresClient.mayReplay(PostgresError(.server, message: "x"), completedStatements: 0, openedTransaction: true))
        }
    }
}
