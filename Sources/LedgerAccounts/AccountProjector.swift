import Foundation
import LedgerCore
import LedgerIdentity
import LedgerPostgres

/// Writes the projections of one account from its state after new events: the same rows a
/// rebuild from the whole stream would write.
///
/// The rows depend only on the state after the events and on each event with its time, so a
/// rebuild projects a whole stream in one call and gets what every write on the way wrote.
enum AccountProjector {
    /// A write's events, all recorded at `time`.
    static func project(_ state: AccountState, events: [AccountEvent], at time: Date, on connection: PostgresConnection) async throws {
        try await project(state, events: events.map { ($0, time) }, on: connection)
    }

    static func project(_ state: AccountState, events: [(AccountEvent, Date)], on connection: PostgresConnection) async throws {
        guard let createdAt = state.createdAt else { return }
        try await projectLinks(state, events: events, on: connection)
        do {
            try await connection.query(
                """
                INSERT INTO accounts (account_id, version, email, email_normalized, email_verified, password_hash,
                                      password_changed_at, display_name, handle, handle_normalized, handle_is_temporary, created_at,
                                      phone_e164, phone_region, apple_subject, google_subject, deleted_at, purge_after)
                VALUES ($1, $2, $3, CASE WHEN $15::timestamptz IS NULL THEN lower($3) END, $4, $5, $6, $7, $8, lower($8), $9, $10,
                        CASE WHEN $15::timestamptz IS NULL THEN $11 END, $12,
                        CASE WHEN $15::timestamptz IS NULL THEN $13 END, CASE WHEN $15::timestamptz IS NULL THEN $14 END, $15, $16)
                ON CONFLICT (account_id) DO UPDATE SET
                    version = EXCLUDED.version, email = EXCLUDED.email, email_normalized = EXCLUDED.email_normalized,
                    email_verified = EXCLUDED.email_verified, password_hash = EXCLUDED.password_hash,
                    password_changed_at = EXCLUDED.password_changed_at, display_name = EXCLUDED.display_name,
                    handle = EXCLUDED.handle, handle_normalized = EXCLUDED.handle_normalized,
                    handle_is_temporary = EXCLUDED.handle_is_temporary, phone_e164 = EXCLUDED.phone_e164,
                    phone_region = EXCLUDED.phone_region, apple_subject = EXCLUDED.apple_subject,
                    google_subject = EXCLUDED.google_subject, deleted_at = EXCLUDED.deleted_at,
                    purge_after = EXCLUDED.purge_after
                """,
                [
                    .uuid(state.accountID), .int(state.version), state.email.map { .text($0) } ?? .null,
                    .bool(state.emailVerified), state.passwordHash.map { .text($0) } ?? .null,
                    state.passwordChangedAt.map { .timestamp($0) } ?? .null, state.displayName.map { .text($0) } ?? .null,
                    state.handle.map { .text($0) } ?? .null, .bool(state.handleIsTemporary), .timestamp(createdAt),
                    state.phone.map { .text($0) } ?? .null, state.phoneRegion.map { .text($0) } ?? .null,
                    state.providerSubjects[.apple].map { .text($0) } ?? .null,
                    state.providerSubjects[.google].map { .text($0) } ?? .null,
                    state.deletedAt.map { .timestamp($0) } ?? .null, state.purgeAfter.map { .timestamp($0) } ?? .null,
                ])
        } catch let error as PostgresError where error.code == .uniqueViolation {
            throw ClaimTaken(constraint: error.constraint)
        }
        for case (.deletionScheduled(let scheduled), _) in events {
            for key in scheduled.cooldownKeys {
                try await connection.query(
                    """
                    INSERT INTO signup_cooldowns (key_hmac, account_id, until) VALUES ($1, $2, $3)
                    ON CONFLICT (key_hmac) DO UPDATE SET until = greatest(signup_cooldowns.until, EXCLUDED.until),
                        account_id = EXCLUDED.account_id
                    """,
                    [.bytea(Hex.decode(key) ?? []), .uuid(state.accountID), .timestamp(scheduled.cooldownUntil)])
            }
        }
        for sessionID in changedSessions(events.map(\.0)) {
            guard let session = state.sessions[sessionID] else { continue }
            try await connection.query(
                """
                INSERT INTO sessions (session_id, account_id, method, device, access_token_sha256, refresh_token_sha256,
                                      created_at, last_used_at, access_expires_at, refresh_expires_at, revoked_at, revoked_reason)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                ON CONFLICT (session_id) DO UPDATE SET
                    access_token_sha256 = EXCLUDED.access_token_sha256, refresh_token_sha256 = EXCLUDED.refresh_token_sha256,
                    last_used_at = EXCLUDED.last_used_at, access_expires_at = EXCLUDED.access_expires_at,
                    refresh_expires_at = EXCLUDED.refresh_expires_at, revoked_at = EXCLUDED.revoked_at,
                    revoked_reason = EXCLUDED.revoked_reason
                """,
                [
                    .uuid(session.id), .uuid(state.accountID), .text(session.method), session.device.map { .text($0) } ?? .null,
                    .bytea(Hex.decode(session.accessTokenHash) ?? []), .bytea(Hex.decode(session.refreshTokenHash) ?? []),
                    .timestamp(session.createdAt), .timestamp(session.lastUsedAt), .timestamp(session.accessExpiresAt),
                    .timestamp(session.refreshExpiresAt), session.revokedAt.map { .timestamp($0) } ?? .null,
                    session.revokedReason.map { .text($0) } ?? .null,
                ])
            for spent in session.spentRefreshHashes {
                try await connection.query(
                    """
                    INSERT INTO spent_refresh_tokens (refresh_token_sha256, session_id, account_id) VALUES ($1, $2, $3)
                    ON CONFLICT DO NOTHING
                    """,
                    [.bytea(Hex.decode(spent) ?? []), .uuid(session.id), .uuid(state.accountID)])
            }
        }
    }

    /// The link index: new links by token hash; spent ones marked used.
    static func projectLinks(_ state: AccountState, events: [(AccountEvent, Date)], on connection: PostgresConnection) async throws {
        for (event, time) in events {
            switch event {
            case .emailVerificationSent(let sent):
                try await insertLink(state.accountID, sent.tokenHash, sent.linkID, .verifyEmail, sent.expiresAt, on: connection)
            case .passwordResetRequested(let sent):
                try await insertLink(state.accountID, sent.tokenHash, sent.linkID, .passwordReset, sent.expiresAt, on: connection)
            case .reauthLinkSent(let sent):
                try await insertLink(state.accountID, sent.tokenHash, sent.linkID, .reauth, sent.expiresAt, on: connection)
            case .emailChangeRequested(let sent):
                try await insertLink(state.accountID, sent.tokenHash, sent.linkID, .emailChange, sent.expiresAt, on: connection)
            case .emailChanged(let changed):
                for purpose in [AccountState.PendingLink.Purpose.emailChange, .verifyEmail] {
                    try await markLinksUsed(state.accountID, purpose, at: time, on: connection)
                }
                try await insertLink(
                    state.accountID, changed.revertTokenHash, changed.revertLinkID, .emailRevert, changed.revertExpiresAt, on: connection)
            case .emailReverted:
                for purpose in [AccountState.PendingLink.Purpose.emailChange, .emailRevert, .verifyEmail] {
                    try await markLinksUsed(state.accountID, purpose, at: time, on: connection)
                }
            case .emailVerified:
                try await markLinksUsed(state.accountID, .verifyEmail, at: time, on: connection)
            case .passwordSet(let set) where set.reason == "reset":
                try await markLinksUsed(state.accountID, .passwordReset, at: time, on: connection)
            case .reauthGranted(let granted):
                guard let linkID = granted.linkID else { continue }
                try await connection.query(
                    "UPDATE email_links SET used_at = $2 WHERE link_id = $1 AND used_at IS NULL", [.uuid(linkID), .timestamp(time)])
            default:
                continue
            }
        }
    }

    private static func insertLink(
        _ accountID: UUID, _ tokenHash: String?, _ linkID: UUID, _ purpose: AccountState.PendingLink.Purpose, _ expiresAt: Date,
        on connection: PostgresConnection
    ) async throws {
        guard let hash = tokenHash.flatMap({ Hex.decode($0) }) else { return }
        try await connection.query(
            """
            INSERT INTO email_links (token_sha256, link_id, account_id, purpose, expires_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT DO NOTHING
            """,
            [.bytea(hash), .uuid(linkID), .uuid(accountID), .text(purpose.rawValue), .timestamp(expiresAt)])
    }

    private static func markLinksUsed(
        _ accountID: UUID, _ purpose: AccountState.PendingLink.Purpose, at time: Date, on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            "UPDATE email_links SET used_at = $3 WHERE account_id = $1 AND purpose = $2 AND used_at IS NULL",
            [.uuid(accountID), .text(purpose.rawValue), .timestamp(time)])
    }

    private static func changedSessions(_ events: [AccountEvent]) -> Set<UUID> {
        var changed = Set<UUID>()
        for event in events {
            switch event {
            case .sessionStarted(let started): changed.insert(started.sessionID)
            case .sessionRefreshed(let refreshed): changed.insert(refreshed.sessionID)
            case .sessionRevoked(let revoked): changed.insert(revoked.sessionID)
            default: break
            }
        }
        return changed
    }
}
