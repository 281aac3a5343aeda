import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres

extension EventStore {
    /// Computes, signs and stores a checkpoint of the ledger as of the feed's current position.
    ///
    /// Everything is read in one REPEATABLE READ, read-only snapshot, so the position, the event
    /// count, the feed digest and the stream heads describe the same instant. The position is
    /// the feed's (the last event below `pg_snapshot_xmin`): every event at or before it is
    /// committed and no transaction can still add one there, so the checkpoint stays true while
    /// appends go on. A read-only transaction takes no transaction id, so it holds nobody's
    /// feed back. Stream heads are computed from the events as of the position, not read from
    /// `streams`, which may already be ahead (and is only as trustworthy as the database).
    public func createCheckpoint(signingKey: Ed25519.PrivateKey) async throws -> Checkpoint {
        let createdAt = clock.now()
        let state = try await client.transaction(isolation: .repeatableRead) { connection in
            try await connection.query("SET TRANSACTION READ ONLY")
            let cursor = try await headCursor(on: connection)
            let feed = try await feedDigest(through: cursor, on: connection)
            let heads = try await streamHeads(through: cursor, on: connection)
            return (cursor: cursor, feed: feed, heads: heads)
        }
        let checkpoint = try Checkpoint(
            id: UUID(), createdAt: createdAt, cursor: state.cursor, events: state.feed.events, feedDigest: state.feed.digest,
            streams: state.heads, signingKey: signingKey)
        try await client.query(
            """
            INSERT INTO checkpoints (id, created_at, feed_cursor, event_count, stream_count, digest, public_key, signature, document)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """,
            [
                .uuid(checkpoint.id), .timestamp(createdAt), .text(checkpoint.cursor.token), .int(checkpoint.events),
                .int(Int64(checkpoint.streams.count)), .bytea(checkpoint.digest), .bytea(checkpoint.publicKey.rawRepresentation),
                .bytea(checkpoint.signature), .text(try checkpoint.document()),
            ])
        logger.info(
            "signed a checkpoint",
            metadata: [
                "checkpoint_id": "\(checkpoint.id.lowercased)", "events": "\(checkpoint.events)",
                "streams": "\(checkpoint.streams.count)", "key": "\(checkpoint.publicKey.fingerprint)",
            ])
        return checkpoint
    }

    /// Checks a checkpoint document: first the document against `publicKey` (the key the
    /// auditor holds — the one inside the document must equal it, but is never trusted alone),
    /// then that the document's contents are what was signed, then the database: every
    /// checkpointed stream's chain recomputed from its raw rows up to the signed version must
    /// end in the signed head hash, and the feed up to the signed cursor must hold the signed
    /// number of events with the signed digest.
    ///
    /// Returns the first problem; events appended after the checkpoint are not looked at.
    /// Throws only when the database cannot be read.
    public func verifyCheckpoint(document text: String, publicKey: Ed25519.PublicKey) async throws -> CheckpointVerification {
        let checkpoint: Checkpoint
        do {
            checkpoint = try Checkpoint(document: text)
        } catch let error as EventStoreError {
            return CheckpointVerification(
                checkpoint: nil, streamsVerified: 0, failure: .init(location: .document, reason: error.message))
        }
        var verified = 0
        func failed(_ location: CheckpointVerification.Location, _ reason: String) -> CheckpointVerification {
            CheckpointVerification(checkpoint: checkpoint, streamsVerified: verified, failure: .init(location: location, reason: reason))
        }
        guard checkpoint.publicKey == publicKey else {
            return failed(
                .document, "signed with key \(checkpoint.publicKey.fingerprint), not the given key \(publicKey.fingerprint)")
        }
        guard publicKey.isValidSignature(checkpoint.signature, for: checkpoint.digest) else {
            return failed(.document, "the signature does not verify under the given public key")
        }
        guard checkpoint.canonicalDigest == checkpoint.digest else {
            return failed(.document, "the document's contents are not what was signed: the file was edited")
        }
        return try await client.withConnection { connection in
            for head in checkpoint.streams {
                let walk = try await walkChain(head.streamID, through: head.version, on: connection)
                if let broken = walk.failure {
                    return failed(.stream(head.streamID, version: broken.version), broken.reason)
                }
                // The rows form a valid chain, yet not the signed one: someone rewrote an event
                // at or before this version and recomputed the hashes after it. The head hash
                // cannot say which event; the signed version is the most precise position.
                if walk.lastHash != head.hash {
                    return failed(
                        .stream(head.streamID, version: head.version),
                        "the chain holds but does not end in the signed head hash: an event at or before this version "
                            + "was rewritten and the chain recomputed")
                }
                verified += 1
            }
            let feed = try await feedDigest(through: checkpoint.cursor, on: connection)
            if feed.events != checkpoint.events {
                return failed(
                    .feed, "\(feed.events) event(s) are at or before the checkpoint's cursor; \(checkpoint.events) were signed")
            }
            if feed.digest != checkpoint.feedDigest {
                return failed(
                    .feed, "the events at or before the checkpoint's cursor differ from those signed, or are in another commit order")
            }
            return CheckpointVerification(checkpoint: checkpoint, streamsVerified: verified, failure: nil)
        }
    }

    /// The number of events at or before `cursor` and SHA-256 over their `hash`es in commit
    /// order, read in keyset pages of the hash column alone so that millions of events take
    /// constant memory.
    func feedDigest(through cursor: FeedCursor, on connection: PostgresConnection) async throws -> (events: Int64, digest: [UInt8]) {
        let hasher = SHA256Hasher()
        var after = FeedCursor.start
        var events: Int64 = 0
        let pageSize = 20_000
        while true {
            let page = try await connection.queryBinary(
                """
                SELECT tx_id, global_position, hash FROM events
                WHERE (tx_id, global_position) > ($1::xid8, $2) AND (tx_id, global_position) <= ($3::xid8, $4)
                ORDER BY tx_id, global_position LIMIT $5
                """,
                [
                    .text(String(after.transactionID)), .int(after.position), .text(String(cursor.transactionID)),
                    .int(cursor.position), .int(Int64(pageSize)),
                ])
            for index in 0..<page.rowCount {
                let row = page[index]
                guard let transactionID = try row.binaryUnsigned(0), let position = try row.binaryInteger(1),
                    let hash = row.binaryBytes(2)
                else { throw PostgresError(.decoding, message: "an events row has an unexpected NULL") }
                hasher.update(hash)
                after = FeedCursor(transactionID: transactionID, position: position)
            }
            events += Int64(page.rowCount)
            if page.rowCount < pageSize { break }
        }
        return (events, hasher.finalize())
    }

    /// Every stream's last event at or before `cursor`: its version and hash.
    func streamHeads(through cursor: FeedCursor, on connection: PostgresConnection) async throws -> [Checkpoint.StreamHead] {
        let result = try await connection.queryBinary(
            """
            SELECT DISTINCT ON (stream_id) stream_id, stream_version, hash FROM events
            WHERE (tx_id, global_position) <= ($1::xid8, $2)
            ORDER BY stream_id, stream_version DESC
            """,
            [.text(String(cursor.transactionID)), .int(cursor.position)])
        var heads: [Checkpoint.StreamHead] = []
        heads.reserveCapacity(result.rowCount)
        for index in 0..<result.rowCount {
            let row = result[index]
            guard let streamID = try row.binaryUUID(0), let version = try row.binaryInteger(1), let hash = row.binaryBytes(2)
            else { throw PostgresError(.decoding, message: "an events row has an unexpected NULL") }
            heads.append(Checkpoint.StreamHead(streamID: streamID, version: version, hash: hash))
        }
        return heads
    }
}
