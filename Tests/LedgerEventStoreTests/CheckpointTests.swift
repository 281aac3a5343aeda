import Foundation
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import LedgerTestSupport
import Testing

@Suite("Event store: signed checkpoints")
struct CheckpointTests {
    /// Two unencrypted streams of five events each (ten in the feed), and a checkpoint of them.
    struct Signed {
        let store: EventStore
        let first: UUID
        let second: UUID
        let key: Ed25519.PrivateKey
        let checkpoint: Checkpoint
        let document: String

        func verify(_ document: String? = nil, key: Ed25519.PublicKey? = nil) async throws -> CheckpointVerification {
            try await store.verifyCheckpoint(document: document ?? self.document, publicKey: key ?? self.key.publicKey)
        }
    }

    static func signed(_ db: TestDatabase) async throws -> Signed {
        let store = db.eventStore()
        let first = try await IntegrityTests.seed(store, subject: false)
        let second = try await IntegrityTests.seed(store, subject: false)
        // The feed shows only transactions older than every running one, cluster-wide, and
        // other tests run beside this one: wait until all ten events are below the horizon.
        try await store.waitForFeed(count: 10)
        let key = try Ed25519.PrivateKey.generate()
        let checkpoint = try await store.createCheckpoint(signingKey: key)
        return Signed(store: store, first: first, second: second, key: key, checkpoint: checkpoint, document: try checkpoint.document())
    }

    @Test("a checkpoint covers every stream head and the feed, and is stored")
    func contents() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            let checkpoint = signed.checkpoint
            #expect(checkpoint.events == 10)
            #expect(Set(checkpoint.streams.map(\.streamID)) == [signed.first, signed.second])
            #expect(checkpoint.streams.allSatisfy { $0.version == 5 })
            let heads = try await db.client.query("SELECT stream_id, head_hash FROM streams")
            var headHashes: [UUID: [UInt8]] = [:]
            for row in heads.rows { headHashes[try #require(try row.uuid(0))] = try row.bytes(1) }
            for head in checkpoint.streams { #expect(headHashes[head.streamID] == head.hash) }
            let stored = try await db.client.query(
                "SELECT event_count, stream_count, document, digest FROM checkpoints WHERE id = $1", [.uuid(checkpoint.id)])
            #expect(stored.rowCount == 1)
            #expect(try stored[0].int(0) == 10 && stored[0].int(1) == 2)
            #expect(stored[0].string(2) == signed.document)
            #expect(try stored[0].bytes(3) == checkpoint.digest)
            // The document round-trips and is signed with the key.
            #expect(try Checkpoint(document: signed.document) == checkpoint)
            #expect(signed.key.publicKey.isValidSignature(checkpoint.signature, for: checkpoint.digest))
        }
    }

    @Test("untouched history verifies, also after more appends")
    func untouched() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            let result = try await signed.verify()
            #expect(result.ok, "\(String(describing: result.failure))")
            #expect(result.streamsVerified == 2)

            // Appends to a checkpointed stream and a new one come after the cursor.
            try await signed.store.append(
                to: signed.first, streamType: "account", subjectID: nil, expected: .exact(5),
                events: [NewEvent(type: "test.changed", payload: Array("{\"n\":6}".utf8))])
            _ = try await IntegrityTests.seed(signed.store, subject: false)
            try await signed.store.waitForFeed(count: 16)
            let later = try await signed.verify()
            #expect(later.ok, "\(String(describing: later.failure))")

            // A second checkpoint covers the new events and verifies too.
            let next = try await signed.store.createCheckpoint(signingKey: signed.key)
            #expect(next.events == 16 && next.streams.count == 3)
            #expect(next.cursor > signed.checkpoint.cursor)
            #expect(try await signed.verify(next.document()).ok)
        }
    }

    @Test("an empty ledger checkpoints and verifies")
    func emptyLedger() async throws {
        try await TestPostgres.withDatabase { db in
            let key = try Ed25519.PrivateKey.generate()
            let checkpoint = try await db.eventStore().createCheckpoint(signingKey: key)
            #expect(checkpoint.events == 0 && checkpoint.streams.isEmpty && checkpoint.cursor == .start)
            #expect(try await db.eventStore().verifyCheckpoint(document: checkpoint.document(), publicKey: key.publicKey).ok)
        }
    }

    @Test("an edited payload is found at its stream and version")
    func editedPayload() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            try await db.client.query(
                "UPDATE events SET payload = convert_to('{\"n\":99}', 'UTF8') WHERE stream_id = $1 AND stream_version = 3",
                [.uuid(signed.second)])
            let result = try await signed.verify()
            #expect(result.failure?.location == .stream(signed.second, version: 3))
            #expect(result.failure?.reason.contains("payload") == true)
        }
    }

    @Test("a deleted event is found: in the middle of a stream and at its head")
    func deletedEvent() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            try await db.client.query("DELETE FROM events WHERE stream_id = $1 AND stream_version = 5", [.uuid(signed.first)])
            #expect(try await signed.verify().failure?.location == .stream(signed.first, version: 5))
            try await db.client.query("DELETE FROM events WHERE stream_id = $1 AND stream_version = 2", [.uuid(signed.first)])
            #expect(try await signed.verify().failure?.location == .stream(signed.first, version: 2))
        }
    }

    @Test("a deleted stream is found")
    func deletedStream() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            try await db.client.query("DELETE FROM events WHERE stream_id = $1", [.uuid(signed.second)])
            try await db.client.query("DELETE FROM stream_catalog WHERE stream_id = $1", [.uuid(signed.second)])
            #expect(try await signed.verify().failure?.location == .stream(signed.second, version: 1))
        }
    }

    @Test("two events swapped within a stream are found")
    func reorderedInStream() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            // Versions 2 and 3 change places (through a free version: the primary key is checked row by row).
            for (from, to) in [(2, 1000), (3, 2), (1000, 3)] {
                try await db.client.query(
                    "UPDATE events SET stream_version = $2 WHERE stream_id = $1 AND stream_version = $3",
                    [.uuid(signed.first), .int(Int64(to)), .int(Int64(from))])
            }
            #expect(try await signed.verify().failure?.location == .stream(signed.first, version: 2))
        }
    }

    @Test("two events swapped in the feed's commit order are found in the feed")
    func reorderedInFeed() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            // The first stream's first event and the second stream's last change transactions:
            // each stream's chain still holds, only the commit order differs.
            try await db.client.query(
                """
                WITH a AS (SELECT global_position, tx_id FROM events WHERE stream_id = $1 AND stream_version = 1),
                     b AS (SELECT global_position, tx_id FROM events WHERE stream_id = $2 AND stream_version = 5)
                UPDATE events e SET tx_id = CASE WHEN e.global_position = a.global_position THEN b.tx_id ELSE a.tx_id END
                FROM a, b WHERE e.global_position IN (a.global_position, b.global_position)
                """, [.uuid(signed.first), .uuid(signed.second)])
            #expect(try await signed.store.verify(streamID: signed.first).ok)
            let result = try await signed.verify()
            #expect(result.failure?.location == .feed)
            #expect(result.streamsVerified == 2)
        }
    }

    @Test("an event moved out of the checkpointed feed is found in the feed")
    func movedOutOfFeed() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            try await db.client.query(
                "UPDATE events SET tx_id = (tx_id::text::bigint + 1000000)::text::xid8 WHERE stream_id = $1 AND stream_version = 5",
                [.uuid(signed.first)])
            let result = try await signed.verify()
            #expect(result.failure?.location == .feed)
            #expect(result.failure?.reason.contains("9 event(s)") == true)
        }
    }

    @Test("a fully recomputed chain, which plain verify accepts, is found by the checkpoint")
    func recomputedChain() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            let stream = signed.first
            // Rewrite version 3's payload and its digest, then every hash from there on, exactly
            // as the append function would have: a consistent forged history (the stream head
            // is the last event's hash, so it follows).
            try await db.client.query(
                """
                UPDATE events SET payload = convert_to('{"n":99}', 'UTF8'), payload_sha256 = sha256(convert_to('{"n":99}', 'UTF8'))
                WHERE stream_id = $1 AND stream_version = 3
                """, [.uuid(stream)])
            for version in 3...5 {
                try await db.client.query(
                    """
                    UPDATE events e SET prev_hash = p.hash,
                        hash = sha256(p.hash || ledger_event_canonical(e.stream_id, e.stream_version, e.event_type,
                                                  e.schema_version, e.payload_sha256, e.metadata, e.recorded_at))
                    FROM events p
                    WHERE e.stream_id = $1 AND e.stream_version = $2 AND p.stream_id = e.stream_id AND p.stream_version = e.stream_version - 1
                    """, [.uuid(stream), .int(Int64(version))])
            }

            let plain = try await signed.store.verify(streamID: stream)
            #expect(plain.ok, "the forgery must fool the chain check alone")
            #expect(plain.events == 5)

            let result = try await signed.verify()
            #expect(!result.ok)
            #expect(result.failure?.location == .stream(stream, version: 5))
            #expect(result.failure?.reason.contains("recomputed") == true)
        }
    }

    @Test("an edited checkpoint file is refused")
    func editedDocument() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            let head = signed.checkpoint.streams[0]
            // Claim another head hash for a stream (as if to bless a rewritten history).
            let forgedHash = Hex.encode(SHA256.hash(Array("forged".utf8)))
            let edited = signed.document.replacingOccurrences(of: Hex.encode(head.hash), with: forgedHash)
            #expect(edited != signed.document)
            let result = try await signed.verify(edited)
            #expect(result.failure?.location == .document)
            #expect(result.failure?.reason.contains("edited") == true)

            // Changing the event count is refused the same way.
            let recounted = signed.document.replacingOccurrences(of: "\"events\" : 10", with: "\"events\" : 9")
            #expect(recounted != signed.document)
            #expect(try await signed.verify(recounted).failure?.location == .document)

            // Something that is not a checkpoint at all is refused, not thrown.
            #expect(try await signed.verify("not json").failure?.location == .document)
        }
    }

    @Test("a wrong public key is refused, also when the file names the signer's key")
    func wrongKey() async throws {
        try await TestPostgres.withDatabase { db in
            let signed = try await Self.signed(db)
            let stranger = try Ed25519.PrivateKey.generate()
            let result = try await signed.verify(key: stranger.publicKey)
            #expect(result.failure?.location == .document)
            #expect(result.failure?.reason.contains(stranger.publicKey.fingerprint) == true)

            // A forger who signs with their own key and names it in the file is still refused
            // by the auditor's key.
            let forged = try await signed.store.createCheckpoint(signingKey: stranger)
            let forgedResult = try await signed.verify(forged.document())
            #expect(forgedResult.failure?.location == .document)
            // And a file naming the auditor's key but signed by another fails the signature.
            let swappedKey = try forged.document().replacingOccurrences(
                of: Data(stranger.publicKey.rawRepresentation).base64EncodedString(),
                with: Data(signed.key.publicKey.rawRepresentation).base64EncodedString())
            let swapped = try await signed.verify(swappedKey)
            #expect(swapped.failure?.location == .document)
            #expect(swapped.failure?.reason.contains("signature") == true)
        }
    }
}
