import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Accounts on the event store, with their projections written in the append's transaction.
public struct PostgresAccountRepository: AccountRepository {
    let store: EventStore
    let clock: any LedgerClock
    /// Keys the cooldown list, which every claim is checked against in its transaction.
    let retention: Retention
    /// The messages the events imply (provider revocations, new sign-in alerts).
    let implied: ImpliedMessages
    public var revocations: ProviderTokenRevocations { implied.revocations }
    public let policies: Policies
    /// The signed-in reads, batched across concurrent requests.
    let accessReads: AccessTokenReads
    public static let streamType = "account"

    /// - Parameter retention: the same as the services' (its key finds the cooldown list's rows).
    public init(store: EventStore, clock: any LedgerClock, policies: Policies, retention: Retention) {
        self.store = store
        self.clock = clock
        self.policies = policies
        self.retention = retention
        self.implied = ImpliedMessages(masterKey: store.keyring.masterKey)
        self.accessReads = AccessTokenReads(client: store.client)
    }

    public func execute(
        _ accountID: UUID, outbox: [OutboxMessage], _ command: @Sendable (AccountState) throws -> AccountCommand
    ) async throws -> (AccountState, [AccountEvent]) {
        let outcome = try await store.client.transaction { connection in
            try await execute(accountID, outbox: outbox, command, at: clock.now(), on: connection)
        }
        if !outcome.1.isEmpty { store.committed() }
        return outcome
    }

    /// `execute` inside a transaction the caller holds (so another stream can change in the
    /// same commit); the caller tells the store about the commit.
    func execute(
        _ accountID: UUID, outbox: [OutboxMessage], _ command: (AccountState) throws -> AccountCommand, at now: Date,
        on connection: PostgresConnection
    ) async throws -> (AccountState, [AccountEvent]) {
        store.lockStream(accountID, on: connection)
        let fold = try await AccountSnapshots.fold(accountID, at: nil, store: store, on: connection)
        let state = fold.state
        let decided = try command(state)
        let decidedEvents = try decide(state, decided, DecisionContext(now: now, policies: policies))
        assert(
            decided.undeclared(in: decidedEvents).isEmpty,
            "docs/events.md: \(decided.name) appends \(decided.undeclared(in: decidedEvents))")
        // Projected and answered as stored (times to the second), as a rebuild would.
        let stored = try decidedEvents.map { try $0.stored() }
        let events = stored.map(\.event)
        // Only here, under the stream lock that a purge takes too, so a purge never races a new snapshot.
        try await AccountSnapshots.saveIfDue(fold, store: store, on: connection)
        guard !events.isEmpty else { return (state, []) }
        try await guardClaims(events, of: accountID, at: now, on: connection)
        // Nobody else named: the account's own caller (a signed-in session, or the sign-up or
        // sign-in that proved it) caused these.
        let metadata = EventMetadata.current.withActor(default: "account:\(accountID.lowercased)")
        try await store.queueAppend(
            // A purged account's key is gone: what is appended after (a support desk's look,
            // `admin.viewed`) is written unsealed, and holds nothing of the person.
            to: accountID, streamType: Self.streamType, subjectID: state.purgedAt == nil ? accountID : nil,
            expected: .exact(state.version),
            events: stored.map {
                NewEvent(type: $0.event.type, schemaVersion: $0.event.schemaVersion, payload: $0.payload, metadata: metadata)
            },
            recordedAt: now, on: connection)
        let after = events.reduce(into: state) { evolve(&$0, $1, at: now) }
        try await AccountProjector.project(after, from: state, events: events, at: now, on: connection)
        // What the change asked for may take its language; an alert about it never does.
        let asked = outbox.map { $0.inLocale(before: state, after: after, default: policies.defaultLanguage) }
        let alerts = try implied.messages(for: events, before: state, after: after, at: now).map {
            $0.inLocale(before: state, after: nil, default: policies.defaultLanguage)
        }
        for message in asked + alerts { Outbox.enqueue(message, accountID: accountID, at: now, on: connection) }
        // A token kept withdraws every revocation parked for its grant (another abandoned sign-in's too).
        for case .providerTokensStored(let stored) in events {
            let token = AccountState.ProviderToken(
                provider: stored.provider, subject: stored.subject, clientID: stored.clientID, refreshToken: stored.refreshToken)
            Outbox.withdrawParkedRevocations(ofGrant: revocations.grant(of: token), accountID: accountID, on: connection)
        }
        return (after, events)
    }

    public func park(_ message: OutboxMessage, accountID: UUID) async throws {
        try await store.client.withConnection { connection in
            Outbox.enqueue(message, accountID: accountID, at: clock.now(), on: connection)
            try await connection.flush()
        }
    }

    public func history(_ accountID: UUID) async throws -> [RecordedEvent] {
        try await store.readStream(accountID)
    }

    public func load(_ accountID: UUID) async throws -> AccountState {
        try await store.client.withConnection { try await load(accountID, on: $0) }
    }

    /// The account's current state, folded from its newest snapshot.
    func load(_ accountID: UUID, on connection: PostgresConnection) async throws -> AccountState {
        try await AccountSnapshots.fold(accountID, at: nil, store: store, on: connection).state
    }

    public func credentials(forEmail normalizedEmail: String) async throws -> (accountID: UUID, passwordHash: String?)? {
        let rows = try await store.client.query(
            "SELECT account_id, password_hash FROM accounts WHERE email_normalized = $1", [.text(normalizedEmail)])
        guard rows.rowCount == 1, let id = try rows[0].uuid(0) else { return nil }
        return (id, rows[0].string(1))
    }

    public func session(forAccessHash hash: [UInt8], at time: Date) async throws -> SessionRef? {
        try await accessReads.session.value(for: AccessLookup(hash: hash, time: time))
    }

    public func session(forRefreshHash hash: [UInt8]) async throws -> SessionRef? {
        let rows = try await store.client.query(
            """
            SELECT account_id, session_id FROM sessions WHERE refresh_token_sha256 = $1
            UNION ALL
            SELECT account_id, session_id FROM spent_refresh_tokens WHERE refresh_token_sha256 = $1
            LIMIT 1
            """,
            [.bytea(hash)])
        return try Self.sessionRef(rows)
    }

    public func handleHolder(_ handle: Handle) async throws -> UUID? {
        let rows = try await store.client.query("SELECT account_id FROM accounts WHERE handle_normalized = $1", [.text(handle.normalized)])
        return rows.rowCount == 0 ? nil : try rows[0].uuid(0)
    }

    public func accounts(withPublicID publicID: PublicUserID) async throws -> [UUID] {
        try await AccountDirectory.accounts(with: publicID, client: store.client).map(\.accountID)
    }

    public func isHandleFree(_ handle: Handle) async throws -> Bool {
        try await store.client.query(
            "SELECT 1 FROM accounts WHERE handle_normalized = $1", [.text(handle.normalized)]
        ).rowCount == 0
    }

    public func listing(keyHash: [UInt8], at time: Date) async throws -> (reason: Retention.Listing.Reason, accountID: UUID)? {
        let rows = try await store.client.query(
            "SELECT reason, account_id FROM signup_cooldowns WHERE key_hmac = $1 AND until > $2", [.bytea(keyHash), .timestamp(time)])
        guard rows.rowCount == 1, let accountID = try rows[0].uuid(1) else { return nil }
        return (rows[0].string(0).flatMap(Retention.Listing.Reason.init) ?? .deleted, accountID)
    }

    public func providerOwner(_ provider: IdentityProvider, subject: String) async throws -> UUID? {
        let column = provider == .apple ? "apple_subject" : "google_subject"
        let rows = try await store.client.query("SELECT account_id FROM accounts WHERE \(column) = $1", [.text(subject)])
        return rows.rowCount == 0 ? nil : try rows[0].uuid(0)
    }

    public func phoneOwner(_ e164: String) async throws -> UUID? {
        try await store.client.withConnection { try await phoneOwner(e164, on: $0) }
    }

    func phoneOwner(_ e164: String, on connection: PostgresConnection) async throws -> UUID? {
        let rows = try await connection.query("SELECT account_id FROM accounts WHERE phone_e164 = $1", [.text(e164)])
        return rows.rowCount == 0 ? nil : try rows[0].uuid(0)
    }

    public func passkeyOwner(credentialID: String) async throws -> (accountID: UUID, passkeyID: UUID)? {
        let rows = try await store.client.query(
            "SELECT account_id, passkey_id FROM passkey_credentials WHERE credential_sha256 = $1",
            [.bytea(AccountState.Passkey.lookupKey(credentialID: credentialID))])
        guard rows.rowCount > 0, let accountID = try rows[0].uuid(0), let passkeyID = try rows[0].uuid(1) else { return nil }
        return (accountID, passkeyID)
    }

    public func isEmailFree(_ email: EmailAddress) async throws -> Bool {
        try await store.client.query(
            "SELECT 1 FROM accounts WHERE email_normalized = $1", [.text(email.normalized)]
        ).rowCount == 0
    }

    public func emailHolder(_ email: EmailAddress) async throws -> (accountID: UUID, verified: Bool)? {
        let rows = try await store.client.query(
            "SELECT account_id, email_verified FROM accounts WHERE email_normalized = $1", [.text(email.normalized)])
        guard rows.rowCount == 1, let accountID = try rows[0].uuid(0) else { return nil }
        return (accountID, try rows[0].bool(1) == true)
    }

    public func summary(forAccessHash hash: [UInt8], at time: Date) async throws -> (session: SessionRef, summary: AccountSummary)? {
        try await accessReads.summary.value(for: AccessLookup(hash: hash, time: time))
    }

    public func liveSessions(forAccessHash hash: [UInt8], at time: Date) async throws -> (session: SessionRef, sessions: [SessionListing])?
    {
        try await accessReads.liveSessions.value(for: AccessLookup(hash: hash, time: time))
    }

    public func touch(_ uses: [SessionUse], interval: TimeInterval) async throws {
        guard !uses.isEmpty else { return }
        try await store.client.query(
            """
            UPDATE sessions AS s SET last_used_at = u.used_at
              FROM unnest($1::uuid[], $2::timestamptz[]) AS u(session_id, used_at)
             WHERE s.session_id = u.session_id AND s.last_used_at < u.used_at - make_interval(secs => $3::float8)
               AND s.revoked_at IS NULL
            """,
            [
                .uuidArray(uses.map(\.session.sessionID)), .textArray(uses.map { PostgresTimestamp.format($0.usedAt) }),
                .text(String(interval)),
            ])
    }

    public func introspect(accessHash hash: [UInt8], at time: Date) async throws -> Introspection? {
        try await accessReads.introspection.value(for: AccessLookup(hash: hash, time: time))
    }

    public func link(
        forTokenHash hash: [UInt8], purpose: AccountState.PendingLink.Purpose
    ) async throws -> (accountID: UUID, linkID: UUID)? {
        let rows = try await store.client.query(
            "SELECT account_id, link_id FROM email_links WHERE token_sha256 = $1 AND purpose = $2 AND used_at IS NULL",
            [.bytea(hash), .text(purpose.rawValue)])
        guard rows.rowCount == 1, let account = try rows[0].uuid(0), let link = try rows[0].uuid(1) else { return nil }
        return (account, link)
    }

    private static func sessionRef(_ rows: PostgresResult) throws -> SessionRef? {
        guard rows.rowCount > 0, let account = try rows[0].uuid(0), let session = try rows[0].uuid(1) else { return nil }
        return SessionRef(accountID: account, sessionID: session)
    }
}
