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

    @Test("a digest that is not the payload's, or a metadata text jsonb prints otherwise, is refused")
    func refusesWhatItCannotTrust() async throws {
        try await TestPostgres.withDatabase { db in
            let subject = UUID()
            try await db.client.query(
                "INSERT INTO subject_keys (subject_id, wrapped_key, master_key_id) VALUES ($1, '\\x00', 'k')", [.uuid(subject)])
            func insert(payload: [UInt8], digest: [UInt8], metadata: String, place: Int = 1) async throws {
                let stream = UUID()
                try await db.client.query(
                    """
                    SELECT ledger_insert_new_streams(ARRAY[$1::uuid], ARRAY['account'], ARRAY[$2::uuid], 1790000000000000,
                        ARRAY[$6], ARRAY[$1::uuid], ARRAY[$2::uuid], ARRAY[1::int8], ARRAY[gen_random_uuid()], ARRAY['test.changed'],
                        ARRAY[1::int8], ARRAY[$3::bytea], ARRAY[$4::bytea], ARRAY[$5::bytea], ARRAY[$5::bytea], ARRAY[$7::int8])
                    """,
                    [
                        .uuid(stream), .uuid(subject), .bytea(payload), .bytea(digest), .bytea(HashChain.genesis), .text(metadata),
                        .int(Int64(place)),
                    ])
            }
            let payload = Array("{\"n\":1}".utf8)
            try await insert(payload: payload, digest: SHA256.hash(payload), metadata: "{\"actor\": \"a\"}")
            for (digest, metadata, place) in [
                (SHA256.hash(Array("{\"n\":2}".utf8)), "{\"actor\": \"a\"}", 1),
                (SHA256.hash(payload), "{\"actor\":\"a\"}", 1),
                (SHA256.hash(payload), "{\"bbb\": \"1\", \"aa\": \"2\"}", 1),
                (SHA256.hash(payload), "{\"actor\": \"a\"}", 2),
            ] {
                do {
                    try await insert(payload: payload, digest: digest, metadata: metadata, place: place)
                    Issue.record("a call with \(metadata) was written")
                } catch let error as PostgresError {
                    #expect(error.sqlState == "LA002")
                }
            }
            let written = try await db.client.query("SELECT count(*) FROM events")
            #expect(written[0].string(0) == "1")
        }
    }
}
