import Foundation
import LedgerAccounts
import LedgerEventStore
import LedgerPostgres

/// A live access token to read by: its hash, and the time it is judged live at.
struct AccessLookup: Hashable, Sendable, RecordsetRow {
    let hash: [UInt8]
    let time: Date

    func write(to row: inout BinaryRecordset) {
        row.field("hash", bytes: hash)
        row.field("at", time)
    }

    /// The hash's bytes in one go (an array hashes its elements one by one).
    func hash(into hasher: inout Hasher) {
        hash.withUnsafeBytes { hasher.combine(bytes: $0) }
        hasher.combine(time)
    }
}

/// One of the reads by access token, for many tokens in one statement: the `select`ed columns
/// of each token's live session `s` (and the `from` joins' tables), then the lookup's number
/// `r.n`; each lookup's rows together, in `order`, decoded by `decode`.
struct AccessRead<Value: Sendable>: Sendable {
    /// One lookup (every read but under load) as one row of plain parameters: the planner then
    /// knows it reads one session, as the statement before batching did.
    let single: String
    /// Many lookups as binary arrays (`BinaryRecordset`).
    let many: String
    let decode: @Sendable ([PostgresRow]) throws -> Value?

    init(
        _ select: String, from extra: String = "", orderedBy order: String = "",
        _ decode: @escaping @Sendable ([PostgresRow]) throws -> Value?
    ) {
        func statement(_ source: String) -> String {
            """
            SELECT \(select), r.n FROM \(source)
            JOIN sessions s ON s.access_token_sha256 = r.hash AND s.revoked_at IS NULL AND s.access_expires_at > r.at
            \(extra) ORDER BY r.n\(order.isEmpty ? "" : ", " + order)
            """
        }
        single = statement("(VALUES ($1::bytea, $2::timestamptz, 1::int8)) AS r(hash, at, n)")
        many = statement(BinaryRecordset([AccessLookup(hash: [], time: .distantPast)]).source(numbered: "n"))
        self.decode = decode
    }

    /// What each of `lookups` reads, in one statement; lookups that find nothing are absent.
    func values(_ lookups: [AccessLookup], client: PostgresClient) async throws -> [AccessLookup: Value] {
        let result: PostgresResult
        if lookups.count == 1 {
            result = try await client.query(single, [.bytea(lookups[0].hash), .timestamp(lookups[0].time)])
        } else {
            result = try await client.query(many, BinaryRecordset(lookups).parameters)
        }
        let numberColumn = result.columnCount - 1
        var values: [AccessLookup: Value] = [:]
        var rows = result.rows[...]
        while let first = rows.first {
            guard let number = try first.int(numberColumn), (1...lookups.count).contains(Int(number)) else {
                throw PostgresError(.decoding, message: "a batched read answered for no lookup")
            }
            let mine = rows.prefix { (try? $0.int(numberColumn)) == number }
            rows = rows.dropFirst(mine.count)
            values[lookups[Int(number) - 1]] = try decode(Array(mine))
        }
        return values
    }
}

/// The reads behind every signed-in request and every introspection, each batched
/// (`LookupBatcher`): concurrent requests share one statement, which reads each token's rows at
/// that request's own time, so every caller gets exactly what its own statement would have read.
/// Each read has its own queue, bounded by `LEDGER_DB_MAX_WAITERS` (at least a batch) and
/// `LEDGER_DB_POOL_TIMEOUT_SECONDS`, as the pool's queue is.
final class AccessTokenReads: Sendable {
    let session: LookupBatcher<AccessLookup, SessionRef>
    let summary: LookupBatcher<AccessLookup, (session: SessionRef, summary: AccountSummary)>
    let introspection: LookupBatcher<AccessLookup, Introspection>
    let liveSessions: LookupBatcher<AccessLookup, (session: SessionRef, sessions: [SessionListing])>

    init(client: PostgresClient) {
        func batcher<Value>(_ read: AccessRead<Value>) -> LookupBatcher<AccessLookup, Value> {
            LookupBatcher(maximumQueued: client.configuration.maximumWaiters, maximumWait: client.configuration.checkoutTimeout) {
                try await read.values($0, client: client)
            }
        }
        session = batcher(Self.sessionRead)
        summary = batcher(Self.summaryRead)
        introspection = batcher(Self.introspectionRead)
        liveSessions = batcher(Self.liveSessionsRead)
    }

    static let sessionRead = AccessRead<SessionRef>("s.account_id, s.session_id") { rows in
        try sessionRef(rows[0], account: 0, session: 1)
    }

    static let summaryRead = AccessRead<(session: SessionRef, summary: AccountSummary)>(
        """
        a.account_id, a.email, a.email_verified, a.password_hash IS NOT NULL, a.password_changed_at,
        a.display_name, a.handle, a.handle_is_temporary, a.created_at, a.phone_e164, a.phone_region,
        a.apple_subject IS NOT NULL, a.google_subject IS NOT NULL, a.totp_enabled, a.recovery_codes_left, s.session_id,
        CASE WHEN a.pending_email_expires_at > r.at THEN a.pending_email END, a.passkeys,
        (SELECT v.etag FROM avatars v WHERE v.account_id = a.account_id)
        """, from: "JOIN accounts a ON a.account_id = s.account_id", summary)

    static let introspectionRead = AccessRead<Introspection>(
        "s.account_id, s.session_id, a.email_verified, s.access_expires_at", from: "JOIN accounts a ON a.account_id = s.account_id"
    ) { rows in
        let row = rows[0]
        guard let account = try row.uuid(0), let session = try row.uuid(1), let verified = try row.bool(2),
            let expires = try row.date(3)
        else { return nil }
        return Introspection(accountID: account, sessionID: session, emailVerified: verified, expiresAt: expires)
    }

    /// The token's own session is live, so it is among the rows.
    static let liveSessionsRead = AccessRead<(session: SessionRef, sessions: [SessionListing])>(
        "s.account_id, s.session_id, l.session_id, l.method, l.device, l.created_at, l.last_used_at",
        from: "JOIN sessions l ON l.account_id = s.account_id AND l.revoked_at IS NULL AND l.refresh_expires_at > r.at",
        // The session id settles ties (sessions made and used in one instant), so a read alone
        // and the same read in a batch list them alike whatever plan each got.
        orderedBy: "l.last_used_at DESC, l.created_at DESC, l.session_id"
    ) { rows in
        guard let session = try sessionRef(rows[0], account: 0, session: 1) else { return nil }
        let sessions = try rows.compactMap { row -> SessionListing? in
            guard let id = try row.uuid(2), let createdAt = try row.date(5), let lastUsedAt = try row.date(6) else { return nil }
            return SessionListing(
                sessionID: id, method: row.string(3) ?? "", device: row.string(4), createdAt: createdAt, lastUsedAt: lastUsedAt)
        }
        return (session, sessions)
    }

    private static func sessionRef(_ row: PostgresRow, account: Int, session: Int) throws -> SessionRef? {
        guard let accountID = try row.uuid(account), let sessionID = try row.uuid(session) else { return nil }
        return SessionRef(accountID: accountID, sessionID: sessionID)
    }

    private static func summary(_ rows: [PostgresRow]) throws -> (session: SessionRef, summary: AccountSummary)? {
        let row = rows[0]
        guard let id = try row.uuid(0), let sessionID = try row.uuid(15) else { return nil }
        let summary = AccountSummary(
            accountID: id, email: row.string(1), emailVerified: try row.bool(2) ?? false, hasPassword: try row.bool(3) ?? false,
            passwordChangedAt: try row.date(4), displayName: row.string(5), handle: row.string(6),
            handleIsTemporary: try row.bool(7) ?? false, createdAt: try row.date(8), phone: row.string(9),
            phoneRegion: row.string(10), appleLinked: try row.bool(11) ?? false, googleLinked: try row.bool(12) ?? false,
            totpEnabled: try row.bool(13) ?? false, recoveryCodesLeft: Int(try row.int(14) ?? 0), pendingEmail: row.string(16),
            passkeys: Int(try row.int(17) ?? 0), avatarETag: row.string(18))
        return (SessionRef(accountID: id, sessionID: sessionID), summary)
    }
}
