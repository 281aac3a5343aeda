import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import LedgerPostgres

/// Writes the projections of accounts from their state after new events: the same rows a
/// rebuild from the whole stream would write.
///
/// The rows depend only on the state after the events and on each event with its time, so one
/// write (a command's few events) and a rebuild (hundreds of whole streams) take the same path:
/// `add` works the rows out in memory, `write` stores them with one statement per table
/// (`unnest` of binary arrays, `BinaryRecordset`), however many accounts the batch holds.
struct AccountProjector {
    struct AccountRow: RecordsetRow {
        let account_id: UUID, version: Int64, email: String?, email_normalized: String?, email_verified: Bool, password_hash: String?
        let password_changed_at: Date?, display_name: String?, handle: String?, handle_is_temporary: Bool, created_at: Date
        let phone_e164: String?, phone_region: String?, apple_subject: String?, google_subject: String?
        let deleted_at: Date?, purge_after: Date?, deletion_requested_at: Date?
        let totp_enabled: Bool, recovery_codes_left: Int64, passkeys: Int64
        var pending_email: String?, pending_email_expires_at: Date?

        func write(to row: inout BinaryRecordset) {
            row.field("account_id", account_id)
            row.field("version", version)
            row.field("email", email)
            row.field("email_normalized", email_normalized)
            row.field("email_verified", email_verified)
            row.field("password_hash", password_hash)
            row.field("password_changed_at", password_changed_at)
            row.field("display_name", display_name)
            row.field("handle", handle)
            row.field("handle_is_temporary", handle_is_temporary)
            row.field("created_at", created_at)
            row.field("phone_e164", phone_e164)
            row.field("phone_region", phone_region)
            row.field("apple_subject", apple_subject)
            row.field("google_subject", google_subject)
            row.field("deleted_at", deleted_at)
            row.field("purge_after", purge_after)
            row.field("deletion_requested_at", deletion_requested_at)
            row.field("totp_enabled", totp_enabled)
            row.field("recovery_codes_left", recovery_codes_left)
            row.field("passkeys", passkeys)
            row.field("pending_email", pending_email)
            row.field("pending_email_expires_at", pending_email_expires_at)
        }
    }

    struct SessionRow: RecordsetRow {
        let session_id: UUID, account_id: UUID, method: String, device: String?
        let access_token_sha256: String, refresh_token_sha256: String
        let created_at: Date, last_used_at: Date, access_expires_at: Date, refresh_expires_at: Date
        let revoked_at: Date?, revoked_reason: String?

        func write(to row: inout BinaryRecordset) {
            row.field("session_id", session_id)
            row.field("account_id", account_id)
            row.field("method", method)
            row.field("device", device)
            row.field("access_token_sha256", hex: access_token_sha256)
            row.field("refresh_token_sha256", hex: refresh_token_sha256)
            row.field("created_at", created_at)
            row.field("last_used_at", last_used_at)
            row.field("access_expires_at", access_expires_at)
            row.field("refresh_expires_at", refresh_expires_at)
            row.field("revoked_at", revoked_at)
            row.field("revoked_reason", revoked_reason)
        }
    }

    struct SpentTokenRow: RecordsetRow {
        let refresh_token_sha256: String, session_id: UUID, account_id: UUID

        func write(to row: inout BinaryRecordset) {
            row.field("refresh_token_sha256", hex: refresh_token_sha256)
            row.field("session_id", session_id)
            row.field("account_id", account_id)
        }
    }

    struct CooldownRow: RecordsetRow {
        let key_hmac: String, account_id: UUID, until: Date, reason: String

        func write(to row: inout BinaryRecordset) {
            row.field("key_hmac", hex: key_hmac)
            row.field("account_id", account_id)
            row.field("until", until)
            row.field("reason", reason)
        }
    }

    struct HoldLapseRow: RecordsetRow {
        let account_id: UUID, ref: String, lapses_at: Date

        func write(to row: inout BinaryRecordset) {
            row.field("account_id", account_id)
            row.field("ref", ref)
            row.field("lapses_at", lapses_at)
        }
    }

    struct PasskeyRow: RecordsetRow {
        let credential_sha256: String, account_id: UUID, passkey_id: UUID

        func write(to row: inout BinaryRecordset) {
            row.field("credential_sha256", hex: credential_sha256)
            row.field("account_id", account_id)
            row.field("passkey_id", passkey_id)
        }
    }

    struct LinkRow: RecordsetRow {
        let token_sha256: String, link_id: UUID, account_id: UUID, purpose: String, expires_at: Date
        var used_at: Date?

        func write(to row: inout BinaryRecordset) {
            row.field("token_sha256", hex: token_sha256)
            row.field("link_id", link_id)
            row.field("account_id", account_id)
            row.field("purpose", purpose)
            row.field("expires_at", expires_at)
            row.field("used_at", used_at)
        }
    }

    /// A link spent by an event: every unused link of a purpose, one link, or a used revert
    /// link with every revert link that expires no earlier (`evolve`'s rule for a revert: the
    /// owner's earlier way back stays).
    enum LinkUse {
        case purpose(UUID, AccountState.PendingLink.Purpose, Date)
        case link(UUID, Date)
        case revertsFrom(accountID: UUID, linkID: UUID, Date)

        var time: Date {
            switch self {
            case .purpose(_, _, let time), .link(_, let time), .revertsFrom(_, _, let time): return time
            }
        }
    }

    private var accounts: [AccountRow] = []
    /// The accounts these events create, by id: no row to update, so a plain insert (cheaper
    /// than an upsert's speculative one; an import writes a million).
    private var createdAccounts: Set<UUID> = []
    private var sessions: [SessionRow] = []
    private var spentTokens: [SpentTokenRow] = []
    private var cooldowns: [String: CooldownRow] = [:]
    private var cooldownOrder: [String] = []
    private var links: [LinkRow] = []
    /// When the holds that lapse on their own do (the `HoldLapseWorker` reads it), and the
    /// accounts whose rows these replace.
    private var holdLapses: [HoldLapseRow] = []
    private var holdAccounts: [UUID] = []
    private var passkeys: [PasskeyRow] = []
    /// Accounts whose passkey rows are written again (a command's only: a rebuild starts empty).
    private var passkeyAccounts: [UUID] = []
    /// Apple notification ids acted on, remembered service-wide (a command's only: a rebuild
    /// leaves the operational table as it is).
    private var appleNotifications: [(id: String, receivedAt: Date)] = []
    /// Uses in event order, for links stored by earlier writes.
    private var linkUses: [LinkUse] = []

    /// A write's events, all recorded at `time`, taking the account from `previous` to `state`.
    static func project(
        _ state: AccountState, from previous: AccountState, events: [AccountEvent], at time: Date, on connection: PostgresConnection
    ) async throws {
        var projector = AccountProjector()
        projector.add(state, events: events.map { ($0, time) }, from: previous)
        try await projector.write(on: connection, into: .live)
    }

    /// Works out the rows of one account from its state after `events`; `previous` (the state
    /// before them, nil for a rebuild, whose events start at version 1) holds the refresh tokens
    /// current before the first event, which a refresh among them spends.
    mutating func add(_ state: AccountState, events: [(AccountEvent, Date)], from previous: AccountState? = nil) {
        guard let createdAt = state.createdAt else { return }
        // The address add-with-password waits for, while its link lives at the latest event's
        // time: one past it is written no more (the retention sweep clears what is left).
        let lastTime = events.last?.1
        let pendingLink = state.pendingEmail.flatMap { state.pendingLinks[$0.linkID] }.flatMap { link in
            lastTime.map { link.expiresAt > $0 } ?? true ? link : nil
        }
        let earlierUses = linkUses.count
        for (event, time) in events {
            addLinks(state.accountID, event, at: time)
            if previous != nil, case .appleNotificationReceived(let received) = event {
                appleNotifications.append((received.notificationID, time))
            }
        }
        // An account these events create has no links stored by earlier writes: no statement
        // to spend them (an import's verified addresses would each cost one).
        if previous?.exists == false { linkUses.removeSubrange(earlierUses...) }
        let live = state.deletedAt == nil
        if previous?.exists == false { createdAccounts.insert(state.accountID) }
        accounts.append(
            AccountRow(
                account_id: state.accountID, version: state.version, email: state.email,
                email_normalized: live ? state.email.map(EmailAddress.normalize) : nil, email_verified: state.emailVerified,
                password_hash: state.passwordHash, password_changed_at: state.passwordChangedAt, display_name: state.displayName,
                handle: state.handle, handle_is_temporary: state.handleIsTemporary, created_at: createdAt,
                phone_e164: live ? state.phone : nil, phone_region: state.phoneRegion,
                apple_subject: live ? state.providerSubjects[.apple] : nil, google_subject: live ? state.providerSubjects[.google] : nil,
                deleted_at: state.deletedAt, purge_after: state.purgeAfter, deletion_requested_at: state.deletionRequestedAt,
                totp_enabled: state.isTOTPEnabled, recovery_codes_left: Int64(state.isTOTPEnabled ? state.recoveryCodeHashes.count : 0),
                passkeys: Int64(state.passkeys.count),
                pending_email: live ? pendingLink.map { _ in state.pendingEmail?.email } ?? nil : nil,
                pending_email_expires_at: live ? pendingLink?.expiresAt : nil))
        // The address an email change or removal took away is held for its revert link's life,
        // as a deletion's identifiers are for the cooldown (the owner itself may claim it back).
        for listing in Retention.Listing.listed(by: events.map(\.0)) {
            let row = CooldownRow(
                key_hmac: listing.key, account_id: state.accountID, until: listing.until, reason: listing.reason.rawValue)
            // As the upsert does: the longest listing wins, with its account as the owner (a
            // purge clears its own account's rows). Not "the last account written": a rebuild
            // visits accounts by id, not by time.
            if let earlier = cooldowns[listing.key] {
                if listing.until >= earlier.until { cooldowns[listing.key] = row }
            } else {
                cooldownOrder.append(listing.key)
                cooldowns[listing.key] = row
            }
        }
        for sessionID in Self.changedSessions(events.map(\.0)) {
            guard let session = state.sessions[sessionID] else { continue }
            sessions.append(
                SessionRow(
                    session_id: session.id, account_id: state.accountID, method: session.method, device: session.device,
                    access_token_sha256: session.accessTokenHash, refresh_token_sha256: session.refreshTokenHash,
                    created_at: session.createdAt, last_used_at: session.lastUsedAt, access_expires_at: session.accessExpiresAt,
                    refresh_expires_at: session.refreshExpiresAt, revoked_at: session.revokedAt, revoked_reason: session.revokedReason))
        }
        addSpentTokens(state.accountID, events.lazy.map(\.0), from: previous)
        if previous == nil || events.contains(where: { Self.changesPasskeys($0.0) }) {
            passkeyAccounts.append(state.accountID)
            if live {
                for passkey in state.passkeysByAge {
                    passkeys.append(
                        PasskeyRow(
                            credential_sha256: Hex.encode(AccountState.Passkey.lookupKey(credentialID: passkey.credentialID)),
                            account_id: state.accountID, passkey_id: passkey.id))
                }
            }
        }
        if previous == nil || events.contains(where: { Self.changesHolds($0.0) }) {
            holdAccounts.append(state.accountID)
            guard live else { return }
            for hold in state.holds.values.sorted(by: { $0.ref < $1.ref }) {
                guard let lapsesAt = hold.lapsesAt else { continue }
                holdLapses.append(HoldLapseRow(account_id: state.accountID, ref: hold.ref, lapses_at: lapsesAt))
            }
        }
    }

    private static func changesPasskeys(_ event: AccountEvent) -> Bool {
        switch event {
        case .passkeyRegistered, .passkeyRemoved, .deletionScheduled, .purged: return true
        default: return false
        }
    }

    private static func changesHolds(_ event: AccountEvent) -> Bool {
        switch event {
        case .holdPlaced, .holdReleased, .holdLapsed, .deletionScheduled: return true
        default: return false
        }
    }

    /// The refresh tokens these events spent: each refresh spends the session's token before it.
    /// Only the events' own (a session refreshed every 15 minutes for a year has spent ~35,000).
    private mutating func addSpentTokens(
        _ accountID: UUID, _ events: some Sequence<AccountEvent>, from previous: AccountState?
    ) {
        var currentRefreshHashes: [UUID: String] = [:]
        for event in events {
            switch event {
            case .sessionStarted(let started):
                currentRefreshHashes[started.sessionID] = started.refreshTokenHash
            case .sessionRefreshed(let refreshed):
                guard
                    let spent = currentRefreshHashes[refreshed.sessionID]
                        ?? previous?.sessions[refreshed.sessionID]?.refreshTokenHash
                else { continue }
                spentTokens.append(SpentTokenRow(refresh_token_sha256: spent, session_id: refreshed.sessionID, account_id: accountID))
                currentRefreshHashes[refreshed.sessionID] = refreshed.refreshTokenHash
            default:
                continue
            }
        }
    }

    /// The link index: new links by token hash; spent ones marked used (those made in this
    /// batch here, earlier ones by `write`).
    private mutating func addLinks(_ accountID: UUID, _ event: AccountEvent, at time: Date) {
        func insert(_ sent: AccountEvent.EmailLinkSent, _ purpose: AccountState.PendingLink.Purpose) {
            insertLink(accountID, sent.tokenHash, sent.linkID, purpose, sent.expiresAt)
        }
        func use(_ purposes: [AccountState.PendingLink.Purpose]) {
            for purpose in purposes { spend(.purpose(accountID, purpose, time)) }
        }
        switch event {
        case .emailVerificationSent(let sent): insert(sent, .verifyEmail)
        case .passwordResetRequested(let sent): insert(sent, .passwordReset)
        case .reauthLinkSent(let sent): insert(sent, .reauth)
        case .emailChangeRequested(let sent): insert(sent, .emailChange)
        case .emailAddRequested(let requested):
            use([.emailAdd])
            insertLink(accountID, requested.tokenHash, requested.linkID, .emailAdd, requested.expiresAt)
        case .emailAdded(let added):
            if let linkID = added.linkID { spend(.link(linkID, time)) }
        case .emailRemoved(let removed):
            if let linkID = removed.revertLinkID, let expiresAt = removed.revertExpiresAt {
                insertLink(accountID, removed.revertTokenHash, linkID, .emailRevert, expiresAt)
            }
        case .emailChanged(let changed):
            use([.emailChange, .verifyEmail])
            spend(.link(changed.linkID, time))  // an email_add link it completes
            insertLink(accountID, changed.revertTokenHash, changed.revertLinkID, .emailRevert, changed.revertExpiresAt)
        case .emailReverted(let reverted):
            use([.emailChange, .verifyEmail, .emailAdd])
            if let ended = reverted.endedRevertLinkIDs {
                for linkID in [reverted.linkID] + ended { spend(.link(linkID, time)) }
            } else {
                spend(.revertsFrom(accountID: accountID, linkID: reverted.linkID, time))
            }
        case .emailVerified: use([.verifyEmail])
        case .passwordSet(let set) where set.reason.endsResetLinks: use([.passwordReset])
        case .reauthGranted(let granted):
            if let linkID = granted.linkID { spend(.link(linkID, time)) }
        case .emailLinksRevoked(let revoked):
            for linkID in revoked.linkIDs { spend(.link(linkID, time)) }
        default: break
        }
    }

    /// Leaves out the links that expired before `cutoff` (a rebuild's `AccountProjections.Expiry`),
    /// and the pending addresses whose links they were, as the retention sweep does.
    mutating func leaveOut(linksExpiredBefore cutoff: Date) {
        links.removeAll { $0.expires_at < cutoff }
        for index in accounts.indices where accounts[index].pending_email_expires_at.map({ $0 < cutoff }) == true {
            accounts[index].pending_email = nil
            accounts[index].pending_email_expires_at = nil
        }
    }

    private mutating func insertLink(
        _ accountID: UUID, _ tokenHash: String?, _ linkID: UUID, _ purpose: AccountState.PendingLink.Purpose, _ expiresAt: Date
    ) {
        guard let tokenHash, Hex.decode(tokenHash) != nil else { return }
        links.append(
            LinkRow(
                token_sha256: tokenHash, link_id: linkID, account_id: accountID, purpose: purpose.rawValue, expires_at: expiresAt))
    }

    private mutating func spend(_ use: LinkUse) {
        linkUses.append(use)
        let matches: (LinkRow) -> Bool
        switch use {
        case .purpose(let accountID, let purpose, _):
            matches = { $0.account_id == accountID && $0.purpose == purpose.rawValue }
        case .link(let linkID, _):
            matches = { $0.link_id == linkID }
        case .revertsFrom(let accountID, let linkID, _):
            // The used link stored by an earlier write: every revert link here came after it
            // (each lasts as long), so all of them end with it.
            let used = links.first { $0.link_id == linkID }?.expires_at ?? .distantPast
            matches = {
                $0.account_id == accountID && $0.purpose == AccountState.PendingLink.Purpose.emailRevert.rawValue && $0.expires_at >= used
            }
        }
        for index in links.indices where links[index].used_at == nil && matches(links[index]) {
            links[index].used_at = use.time
        }
    }

    /// Stores the rows. On the live tables, links stored by earlier writes may be spent by
    /// these events and rows are upserted; into a rebuild's emptied tables, plain inserts.
    func write(on connection: PostgresConnection, into target: ProjectionTarget) async throws {
        let live = target == .live
        if live {
            // Earlier links predate every event here, so spending them first, in order, is exact.
            for use in linkUses {
                switch use {
                case .purpose(let accountID, let purpose, let time):
                    try await target.write(
                        "UPDATE email_links SET used_at = $3 WHERE account_id = $1 AND purpose = $2 AND used_at IS NULL",
                        [.uuid(accountID), .text(purpose.rawValue), .timestamp(time)], on: connection)
                case .link(let linkID, let time):
                    try await target.write(
                        "UPDATE email_links SET used_at = $2 WHERE link_id = $1 AND used_at IS NULL", [.uuid(linkID), .timestamp(time)],
                        on: connection)
                case .revertsFrom(let accountID, let linkID, let time):
                    // No row for the used link (it is among this write's): no earlier link ends.
                    try await target.write(
                        """
                        UPDATE email_links SET used_at = $3
                        WHERE account_id = $1 AND purpose = 'email_revert' AND used_at IS NULL
                          AND expires_at >= (SELECT expires_at FROM email_links WHERE link_id = $2)
                        """,
                        [.uuid(accountID), .uuid(linkID), .timestamp(time)], on: connection)
                }
            }
        }
        let created = live ? accounts.filter { createdAccounts.contains($0.account_id) } : []
        let upserted = live ? accounts.filter { !createdAccounts.contains($0.account_id) } : accounts
        // Changed accounts first: an address one of them gives up may be one a new account takes.
        for (batch, upsert) in [(upserted, live), (created, false)] where !batch.isEmpty {
            let rows = BinaryRecordset(batch)
            try await target.write(
                """
                INSERT INTO accounts (account_id, version, email, email_normalized, email_verified, password_hash,
                                      password_changed_at, display_name, handle, handle_normalized, handle_is_temporary, created_at,
                                      phone_e164, phone_region, apple_subject, google_subject, deleted_at, purge_after,
                                      deletion_requested_at, totp_enabled, recovery_codes_left, passkeys, pending_email,
                                      pending_email_expires_at)
                SELECT r.account_id, r.version, r.email, r.email_normalized, r.email_verified,
                       r.password_hash, r.password_changed_at, r.display_name, r.handle, lower(r.handle), r.handle_is_temporary,
                       r.created_at, r.phone_e164, r.phone_region, r.apple_subject, r.google_subject, r.deleted_at, r.purge_after,
                       r.deletion_requested_at, r.totp_enabled, r.recovery_codes_left, r.passkeys, r.pending_email,
                       r.pending_email_expires_at
                FROM \(rows.source)
                \(upsert ? """
                ON CONFLICT (account_id) DO UPDATE SET
                    version = EXCLUDED.version, email = EXCLUDED.email, email_normalized = EXCLUDED.email_normalized,
                    email_verified = EXCLUDED.email_verified, password_hash = EXCLUDED.password_hash,
                    password_changed_at = EXCLUDED.password_changed_at, display_name = EXCLUDED.display_name,
                    handle = EXCLUDED.handle, handle_normalized = EXCLUDED.handle_normalized,
                    handle_is_temporary = EXCLUDED.handle_is_temporary, phone_e164 = EXCLUDED.phone_e164,
                    phone_region = EXCLUDED.phone_region, apple_subject = EXCLUDED.apple_subject,
                    google_subject = EXCLUDED.google_subject, deleted_at = EXCLUDED.deleted_at,
                    purge_after = EXCLUDED.purge_after, deletion_requested_at = EXCLUDED.deletion_requested_at,
                    totp_enabled = EXCLUDED.totp_enabled, recovery_codes_left = EXCLUDED.recovery_codes_left,
                    passkeys = EXCLUDED.passkeys,
                    pending_email = EXCLUDED.pending_email, pending_email_expires_at = EXCLUDED.pending_email_expires_at
                """ : "")
                """,
                rows.parameters, on: connection, translate: ClaimTaken.translate)
        }
        if !cooldowns.isEmpty {
            let rows = BinaryRecordset(cooldownOrder.compactMap { cooldowns[$0] })
            try await target.write(
                """
                INSERT INTO signup_cooldowns (key_hmac, account_id, until, reason)
                SELECT r.key_hmac, r.account_id, r.until, r.reason FROM \(rows.source)
                ON CONFLICT (key_hmac) DO UPDATE SET until = EXCLUDED.until, account_id = EXCLUDED.account_id,
                                                     reason = EXCLUDED.reason
                WHERE EXCLUDED.until >= signup_cooldowns.until
                """,
                rows.parameters, on: connection)
        }
        if !sessions.isEmpty {
            let rows = BinaryRecordset(sessions)
            try await target.write(
                """
                INSERT INTO sessions (session_id, account_id, method, device, access_token_sha256, refresh_token_sha256,
                                      created_at, last_used_at, access_expires_at, refresh_expires_at, revoked_at, revoked_reason)
                SELECT r.session_id, r.account_id, r.method, r.device, r.access_token_sha256, r.refresh_token_sha256,
                       r.created_at, r.last_used_at, r.access_expires_at, r.refresh_expires_at, r.revoked_at, r.revoked_reason
                FROM \(rows.source)
                \(live ? """
                ON CONFLICT (session_id) DO UPDATE SET
                    access_token_sha256 = EXCLUDED.access_token_sha256, refresh_token_sha256 = EXCLUDED.refresh_token_sha256,
                    last_used_at = greatest(sessions.last_used_at, EXCLUDED.last_used_at), access_expires_at = EXCLUDED.access_expires_at,
                    refresh_expires_at = EXCLUDED.refresh_expires_at, revoked_at = EXCLUDED.revoked_at,
                    revoked_reason = EXCLUDED.revoked_reason
                """ : "")
                """,
                rows.parameters, on: connection)
        }
        if !spentTokens.isEmpty {
            let rows = BinaryRecordset(spentTokens)
            try await target.write(
                """
                INSERT INTO spent_refresh_tokens (refresh_token_sha256, session_id, account_id)
                SELECT r.refresh_token_sha256, r.session_id, r.account_id FROM \(rows.source)
                \(live ? "ON CONFLICT DO NOTHING" : "")
                """,
                rows.parameters, on: connection)
        }
        for notification in appleNotifications where live {
            // A second transaction acting on the same id fails here and rolls back what it did.
            try await target.write(
                "INSERT INTO apple_notifications (notification_id, received_at) VALUES ($1, $2)",
                [.text(notification.id), .timestamp(notification.receivedAt)], on: connection,
                translate: { error -> any Error in error.code == .uniqueViolation ? AppleNotificationSeen() : error })
        }
        if live && !holdAccounts.isEmpty {
            try await target.write(
                "DELETE FROM hold_lapses WHERE account_id = ANY($1::uuid[])", [.uuidArray(holdAccounts)], on: connection)
        }
        if !holdLapses.isEmpty {
            let rows = BinaryRecordset(holdLapses)
            try await target.write(
                "INSERT INTO hold_lapses (account_id, ref, lapses_at) SELECT r.account_id, r.ref, r.lapses_at FROM \(rows.source)",
                rows.parameters, on: connection)
        }
        if live && !passkeyAccounts.isEmpty {
            try await target.write(
                "DELETE FROM passkey_credentials WHERE account_id = ANY($1::uuid[])", [.uuidArray(passkeyAccounts)], on: connection)
        }
        if !passkeys.isEmpty {
            let rows = BinaryRecordset(passkeys)
            try await target.write(
                """
                INSERT INTO passkey_credentials (credential_sha256, account_id, passkey_id)
                SELECT r.credential_sha256, r.account_id, r.passkey_id FROM \(rows.source)
                """,
                rows.parameters, on: connection, translate: ClaimTaken.translate)
        }
        if !links.isEmpty {
            let rows = BinaryRecordset(links)
            try await target.write(
                """
                INSERT INTO email_links (token_sha256, link_id, account_id, purpose, expires_at, used_at)
                SELECT r.token_sha256, r.link_id, r.account_id, r.purpose, r.expires_at, r.used_at FROM \(rows.source)
                \(live ? "ON CONFLICT DO NOTHING" : "")
                """,
                rows.parameters, on: connection)
        }
    }

    private static func changedSessions(_ events: [AccountEvent]) -> [UUID] {
        var changed: [UUID] = []
        var seen = Set<UUID>()
        for event in events {
            let sessionID: UUID
            switch event {
            case .sessionStarted(let started): sessionID = started.sessionID
            case .sessionRefreshed(let refreshed): sessionID = refreshed.sessionID
            case .sessionRevoked(let revoked): sessionID = revoked.sessionID
            default: continue
            }
            if seen.insert(sessionID).inserted { changed.append(sessionID) }
        }
        return changed
    }
}
