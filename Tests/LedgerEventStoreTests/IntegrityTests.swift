import Foundation
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("Event store: hash chain and tampering")
struct IntegrityTests {
    /// A stream of five events, for tampering with.
    static func seed(_ store: EventStore, subject: Bool = true) async throws -> UUID {
        let stream = UUID()
        for index in 1...5 {
            try await store.append(
                to: stream, streamType: "account", subjectID: subject ? stream : nil, expected: .any,
                events: [NewEvent(type: "test.changed", payload: Array("{\"n\":\(index)}".utf8), metadata: EventMetadata(actor: "a"))])
        }
        return stream
    }

    @Test("an untouched stream verifies, and the SQL and Swift chains agree")
    func untouched() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = try await Self.seed(store)
            let result = try await store.verify(streamID: stream)
            #expect(result.ok)
            #expect(result.events == 5)
            let all = try await store.verifyAll()
            #expect(all.streams == 1 && all.failures.isEmpty)
        }
    }

    @Test("an edited payload is found at its position")
    func editedPayload() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = try await Self.seed(store, subject: false)
            try await db.client.query(
                "UPDATE events SET payload = convert_to('{\"n\":99}', 'UTF8') WHERE stream_id = $1 AND stream_version = 3",
                [.uuid(stream)])
            let result = try await store.verify(streamID: stream)
            #expect(!result.ok)
            #expect(result.firstBadVersion == 3)
        }
    }

    @Test("an edited payload whose digest was recomputed too is still found")
    func editedPayloadAndDigest() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = try await Self.seed(store, subject: false)
            try await db.client.query(
                """
                UPDATE events SET payload = convert_to('{"n":99}', 'UTF8'), payload_sha256 = sha256(convert_to('{"n":99}', 'UTF8'))
                WHERE stream_id = $1 AND stream_version = 2
                """, [.uuid(stream)])
            #expect(try await store.verify(streamID: stream).firstBadVersion == 2)
        }
    }

    @Test("an edited metadata field is found at its position")
    func editedMetadata() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = try await Self.seed(store)
            try await db.client.query(
                "UPDATE events SET metadata = '{\"actor\":\"mallory\"}' WHERE stream_id = $1 AND stream_version = 4",
                [.uuid(stream)])
            let result = try await store.verify(streamID: stream)
            #expect(result.firstBadVersion == 4)
        }
    }

    @Test("a deleted event is found in the middle; one deleted at the end shortens a chain that holds")
    func deletedRows() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let middle = try await Self.seed(store)
            try await db.client.query("DELETE FROM events WHERE stream_id = $1 AND stream_version = 2", [.uuid(middle)])
            #expect(try await store.verify(streamID: middle).firstBadVersion == 2)

            // The head is the last event: what is left verifies, one event shorter, and the
            // next append continues from it. A signed checkpoint finds such a deletion
            // (CheckpointTests.deletedEvent).
            let end = try await Self.seed(store)
            try await db.client.query("DELETE FROM events WHERE stream_id = $1 AND stream_version = 5", [.uuid(end)])
            let result = try await store.verify(streamID: end)
            #expect(result.ok && result.events == 4)
            #expect(try await store.streamVersion(end) == 4)

            let (_, failures) = try await store.verifyAll()
            #expect(failures.map(\.streamID) == [middle])
        }
    }

    @Test("events of a stream that was never registered are found")
    func unregisteredStream() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = try await Self.seed(store)
            try await db.client.query("DELETE FROM stream_catalog WHERE stream_id = $1", [.uuid(stream)])
            let result = try await store.verify(streamID: stream)
            #expect(!result.ok && result.firstBadVersion == 1)
            #expect(result.reason?.contains("never registered") == true)
            // verifyAll pages through the catalog, and still names it.
            let (count, failures) = try await store.verifyAll()
            #expect(count == 1 && failures.map(\.streamID) == [stream])
        }
    }

    @Test("a changed recorded time is found")
    func editedTime() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = try await Self.seed(store)
            try await db.client.query(
                "UPDATE events SET recorded_at = recorded_at - interval '1 day' WHERE stream_id = $1 AND stream_version = 1",
                [.uuid(stream)])
            #expect(try await store.verify(streamID: stream).firstBadVersion == 1)
        }
    }
}

@Suite("Event store: envelope encryption")
struct EncryptionTests {
    @Test("payloads are stored sealed and read back in the clear")
    func sealedAtRest() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = UUID()
            let secret = #"{"email":"alice@example.com"}"#
            try await store.append(
                to: stream, streamType: "account", subjectID: stream, expected: .noStream,
                events: [NewEvent(type: "account.registered", payload: Array(secret.utf8))])
            let raw = try await db.client.query(
                "SELECT position(convert_to('alice', 'UTF8') IN payload) FROM events WHERE stream_id = $1", [.uuid(stream)])
            #expect(try raw[0].int(0) == 0)
            let dump = try await db.client.query("SELECT count(*) FROM subject_keys WHERE wrapped_key IS NOT NULL")
            #expect(try dump[0].int(0) == 1)
            #expect(try await store.readStream(stream)[0].payload == Array(secret.utf8))
        }
    }

    @Test("a wrong master key fails clearly, naming the key ids")
    func wrongMasterKey() async throws {
        try await TestPostgres.withDatabase { db in
            let stream = UUID()
            try await db.eventStore().append(
                to: stream, streamType: "account", subjectID: stream, expected: .noStream,
                events: [NewEvent(type: "account.registered", payload: Array("{}".utf8))])
            let stranger = try MasterKey.generate()
            let error = await #expect(throws: EventStoreError.self) {
                try await db.eventStore(masterKey: stranger).readStream(stream)
            }
            #expect(error?.code == .undecryptable)
            #expect(error?.message.contains("master key") == true)
            #expect(error?.message.contains(stranger.keyID) == true)
        }
    }

    @Test("a destroyed key leaves payloads unreadable, the chain valid, and the subject closed to appends")
    func cryptoShredding() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let stream = try await IntegrityTests.seed(store)
            let other = try await IntegrityTests.seed(store)
            let destroyed = try await db.client.withConnection { connection in
                try await store.keyring.destroy(subjectID: stream, at: db.clock.now(), on: connection)
            }
            #expect(destroyed)
            let events = try await store.readStream(stream)
            #expect(events.count == 5)
            #expect(events.allSatisfy { $0.isRedacted && $0.payload == nil })
            #expect(events.allSatisfy { $0.type == "test.changed" && $0.metadata.actor == "a" })
            #expect(try await store.verify(streamID: stream).ok)
            #expect(try await store.readStream(other).allSatisfy { !$0.isRedacted })
            try await store.waitForFeed(count: 10)
            let feed = try await store.readAll(after: .start, limit: 100)
            #expect(feed.events.filter(\.isRedacted).count == 5)

            // A fresh store (no cached key) and this one both refuse new events for the subject.
            for writer in [store, db.eventStore()] {
                let refused = await #expect(throws: EventStoreError.self) {
                    try await writer.append(
                        to: stream, streamType: "account", subjectID: stream, expected: .any,
                        events: [NewEvent(type: "test.changed", payload: Array("{}".utf8))])
                }
                #expect(refused?.code == .subjectKeyDestroyed)
            }
        }
    }
}

@Suite("Schema migrations")
struct MigrationTests {
    @Test("re-running is a no-op")
    func rerun() async throws {
        try await TestPostgres.withDatabase { db in
            let migrator = try SchemaMigrator(directory: TestPostgres.schemaDirectory)
            #expect(try await migrator.migrate(client: db.client).isEmpty)
            #expect(try await migrator.status(client: db.client).isCurrent)
        }
    }

    @Test("concurrent runs apply each migration exactly once")
    func concurrentRuns() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let migrator = try SchemaMigrator(directory: TestPostgres.schemaDirectory)
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let client = PostgresClient(configuration: .init(url: db.url, maximumConnections: 1))
                        defer { Task { await client.shutdown() } }
                        return try await migrator.migrate(client: client)
                    }
                }
                return try await group.reduce(into: [Int]()) { $0 += $1 }
            }
            #expect(applied.sorted() == migrator.migrations.map(\.version))
            #expect(try await db.client.query("SELECT count(*) FROM schema_migrations")[0].int(0) == Int64(migrator.migrations.count))
        }
    }

    @Test("an edited applied file is refused")
    func editedFileRefused() async throws {
        try await TestPostgres.withDatabase { db in
            let original = try SchemaMigrator(directory: TestPostgres.schemaDirectory).migrations
            var edited = original
            let first = edited[0]
            edited[0] = SchemaMigrator.Migration(version: first.version, name: first.name, sql: first.sql + "\n-- edited\n")
            let migrator = SchemaMigrator(migrations: edited)
            let status = try await migrator.status(client: db.client)
            #expect(status.mismatched == [first.version])
            #expect(!status.isCurrent)
            await #expect(throws: SchemaError.self) { try await migrator.migrate(client: db.client) }
        }
    }

    @Test("a new file is pending, then applied")
    func pendingThenApplied() async throws {
        try await TestPostgres.withDatabase { db in
            let migrations = try SchemaMigrator(directory: TestPostgres.schemaDirectory).migrations
            let extra = SchemaMigrator.Migration(version: 999, name: "999_extra.sql", sql: "CREATE TABLE extra_table (id int);")
            let migrator = SchemaMigrator(migrations: migrations + [extra])
            #expect(try await migrator.status(client: db.client).pending.map(\.version) == [999])
            #expect(try await migrator.migrate(client: db.client) == [999])
            #expect(try await migrator.status(client: db.client).isCurrent)
        }
    }

    @Test("schema 020 on a store with history: every stream head reads as before, and appends continue its chains")
    func headsSurviveSchema020() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let migrations = try SchemaMigrator(directory: TestPostgres.schemaDirectory).migrations
            _ = try await SchemaMigrator(migrations: migrations.filter { $0.version < 20 }).migrate(client: db.client)
            let store = db.eventStore()
            let streams = [
                try await IntegrityTests.seed(store), try await IntegrityTests.seed(store, subject: false),
                try await IntegrityTests.seed(store),
            ]
            let heads = "SELECT stream_id, stream_type, version, head_hash, subject_id, created_at FROM streams ORDER BY stream_id"
            let before = try await db.client.query(heads).rows.map { try Self.head($0) }

            _ = try await SchemaMigrator(migrations: migrations).migrate(client: db.client)
            #expect(try await db.client.query(heads).rows.map { try Self.head($0) } == before)
            for stream in streams {
                let next = try await store.append(
                    to: stream, streamType: "account", subjectID: nil, expected: .exact(5), events: [AppendTests.event()])
                #expect(next.firstVersion == 6)
            }
            let (count, failures) = try await store.verifyAll()
            #expect(count == 3 && failures.isEmpty)
        }
    }

    /// A `streams` row as text, to compare before and after a migration.
    static func head(_ row: PostgresRow) throws -> String {
        let hash = try row.bytes(3).map(Hex.encode) ?? "-"
        return "\(try row.uuid(0)?.uuidString ?? "-") \(row.string(1) ?? "-") \(try row.int(2) ?? 0) \(hash) "
            + "\(try row.uuid(4)?.uuidString ?? "-") \(row.string(5) ?? "-")"
    }
}
