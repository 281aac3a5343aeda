import Foundation
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerTestSupport
import Testing

/// `EventStore.queueNewStreams`: new streams whose hash chains the caller works out
/// (`ledger_insert_new_streams`, schema/034), as an import's batch writes them.
@Suite("Event store: new streams chained by the caller")
struct NewStreamsTests {
    /// Metadata of every shape a request gives: fields absent, text jsonb prints escaped or not.
    static let metadata: [EventMetadata] = {
        var withAddress = EventMetadata(actor: "account:1", correlationID: "req-1", userAgentClass: "ios")
        withAddress.clientAddress = "2001:db8::1"
        return [
            EventMetadata(actor: "system:import"),
            EventMetadata(),
            withAddress,
            EventMetadata(
                actor: "service:key \"quoted\" back\\slash /", correlationID: "é ქ 😀 tab\t line\n \u{01} \u{7F}",
                causationID: "c", userAgentClass: "web"),
        ]
    }()

    @Test("the chains verify, and each metadata text is what PostgreSQL prints for it")
    func chainsVerify() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let streams = (0..<3).map { index in
                NewStream(
                    streamID: UUID(), streamType: "account", subjectID: UUID(),
                    events: (0..<(index + 2)).map { version in
                        NewEvent(
                            type: "test.changed", payload: Array("{\"n\":\(version)}".utf8),
                            metadata: Self.metadata[(index + version) % Self.metadata.count])
                    })
            }
            try await store.client.transaction { connection in
                try store.queueNewStreams(streams, recordedAt: Date(timeIntervalSince1970: 1_790_000_000.123456), on: connection)
                try await connection.flush()
            }
            let verified = try await store.verifyAll()
            #expect(verified.streams == 3 && verified.failures.isEmpty)
            let rows = try await db.client.query(
                "SELECT stream_version, metadata::text, recorded_at = '2026-09-21 14:13:20.123456+00' FROM events WHERE stream_id = $1 ORDER BY stream_version",
                [.uuid(streams[2].streamID)])
            #expect(rows.rowCount == 4)
            #expect(rows[0].string(2) == "t")
            #expect(rows[1].string(1)?.contains("\"correlation_id\": \"é ქ 😀 tab\\t line\\n \\u0001 \u{7F}\"") == true)
            #expect(rows[0].string(1)?.contains("ip_hash") == true, "the address is stored as its hash")
        }
    }

    /// One call of `ledger_insert_new_streams` as a caller might get it wrong: a stream of
    /// `events`, each given as its fields and the hashes claimed for it.
    struct Row {
        var version: Int64 = 1
        var payload = Array("{\"n\":1}".utf8)
        var digest: [UInt8]? = nil
        var prev: [UInt8]? = nil
        var hash: [UInt8]? = nil
        var metadataPlace: Int64 = 1
    }

    static let micros: Int64 = 1_790_000_000_000_000

    /// `rows` for one new stream: digests and hashes worked out as the store does, unless a
    /// row says otherwise; a row's `prev` defaults to the hash worked out for the row before.
    static func call(_ rows: [Row], metadata: String, on client: PostgresClient, subject: UUID) async throws {
        let stream = UUID()
        var events = BinaryRecordset()
        var previous = HashChain.genesis
        for row in rows {
            let digest = row.digest ?? SHA256.hash(row.payload)
            let prev = row.prev ?? previous
            let hash =
                row.hash
                ?? HashChain.hash(
                    previous: prev,
                    HashChain.Link(
                        streamID: stream, version: row.version, type: "test.changed", schemaVersion: 1, payloadSHA256: digest,
                        metadataText: metadata, recordedAtMicros: micros))
            events.row {
                $0.field("stream", stream)
                $0.field("subject", subject)
                $0.field("version", row.version)
                $0.field("event_id", UUID())
                $0.field("type", "test.changed")
                $0.field("schema_version", Int64(1))
                $0.field("payload", bytes: row.payload)
                $0.field("digest", bytes: digest)
                $0.field("prev", bytes: prev)
                $0.field("hash", bytes: hash)
                $0.field("meta", row.metadataPlace)
            }
            previous = hash
        }
        let arrays = events.columnTypes.enumerated().map { "$\($0.offset + 4)::\($0.element.sqlArrayType)" }
        try await client.query(
            """
            SELECT ledger_insert_new_streams(ARRAY[$1::uuid], ARRAY['account'], ARRAY[$2::uuid], \(micros), ARRAY[$3],
                                             \(arrays.joined(separator: ", ")))
            """, [.uuid(stream), .uuid(subject), .text(metadata)] + events.parameters)
    }

    @Test("what the caller worked out is checked: a digest, a hash, a link or a version that is not right is refused")
    func refusesWhatItCannotTrust() async throws {
        try await TestPostgres.withDatabase { db in
            let subject = UUID()
            try await db.client.query(
                "INSERT INTO subject_keys (subject_id, wrapped_key, master_key_id) VALUES ($1, '\\x00', 'k')", [.uuid(subject)])
            let metadata = "{\"actor\": \"a\"}"
            try await Self.call([Row(), Row(version: 2), Row(version: 3)], metadata: metadata, on: db.client, subject: subject)
            let other = HashChain.hash(
                previous: HashChain.genesis,
                HashChain.Link(
                    streamID: UUID(), version: 1, type: "test.changed", schemaVersion: 1, payloadSHA256: HashChain.genesis,
                    metadataText: metadata, recordedAtMicros: Self.micros))
            let refused: [(String, [Row], String)] = [
                ("a digest of other bytes", [Row(digest: SHA256.hash(Array("{\"n\":2}".utf8)))], metadata),
                ("a hash of something else", [Row(hash: other)], metadata),
                ("a first event linked to a hash", [Row(prev: other)], metadata),
                ("a second event not linked to the first", [Row(), Row(version: 2, prev: HashChain.genesis)], metadata),
                ("a stream starting at version 2", [Row(version: 2)], metadata),
                ("a version skipped", [Row(), Row(version: 3)], metadata),
                ("metadata jsonb prints otherwise", [Row()], "{\"actor\":\"a\"}"),
                ("metadata keys in another order", [Row()], "{\"bbb\": \"1\", \"aa\": \"2\"}"),
                ("a metadata place out of range", [Row(metadataPlace: 2)], metadata),
            ]
            for (what, rows, text) in refused {
                do {
                    try await Self.call(rows, metadata: text, on: db.client, subject: subject)
                    Issue.record("\(what) was written")
                } catch let error as PostgresError {
                    #expect(error.sqlState == "LA002", "\(what)")
                }
            }
            let written = try await db.client.query("SELECT count(*) FROM events")
            #expect(written[0].string(0) == "3")
            #expect(try await db.eventStore().verifyAll().failures.isEmpty)
        }
    }
}
