import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity

/// Accounts in memory, for the use cases' fast tests: the same `decide` and `evolve` as the
/// PostgreSQL repository, with its indexes (emails, numbers, provider subjects, sessions by token,
/// unused links, the cooldown list) read from the folded states. One actor: each command runs
/// alone, as the PostgreSQL repository's stream lock makes it.
public actor InMemoryAccountRepository: AccountRepository, AccountImportStore {
    private let clock: any LedgerClock
    private let retention: Retention
    private var states: [UUID: AccountState] = [:]
    private var streams: [UUID: [(event: AccountEvent, recordedAt: Date)]] = [:]
    /// Refresh tokens spent by a rotation (by hex hash): their reuse still finds the session.
    private var spentRefreshTokens: [String: SessionRef] = [:]
    /// Links by token hash (hex), and those used (ended before they expired).
    private var links: [String: (accountID: UUID, linkID: UUID, purpose: AccountState.PendingLink.Purpose)] = [:]
    private var usedLinks: Set<UUID> = []
    /// The re-signup cooldown list and the held addresses: keyed identifier hash (hex) → the
    /// listing, and the account that put it there.
    private var cooldowns: [String: (listing: Retention.Listing, owner: UUID)] = [:]
    /// Apple notification ids acted on, service-wide.
    private var appleNotificationIDs: Set<String> = []
    /// `last_used_at` moved by use, by session (the PostgreSQL repository writes its projection).
    private var touched: [UUID: Date] = [:]
    /// Imported accounts by their keyed `(source, external_id)` (hex), as `account_imports` keeps them.
    private var imports: [String: UUID] = [:]
    /// The pictures, by account (`avatars`; kept in the clear: nothing here outlives the test).
    var avatars: [UUID: (etag: String, picture: [UInt8])] = [:]
    /// The messages commands queued, in order (the outbox).
    public private(set) var outbox: [OutboxMessage] = []
    /// The messages the events imply, as the PostgreSQL repository writes them.
    public nonisolated let implied: ImpliedMessages
    public nonisolated var revocations: ProviderTokenRevocations { implied.revocations }
    public nonisolated let policies: Policies
    /// Actions to run once, after the next `load` of an account read its state and before that
    /// state is returned: a test's way to slip a change in between a read and the command that
    /// acts on it (the caller then holds a stale state, as under a real race).
    private var afterNextLoad: [UUID: @Sendable () async throws -> Void] = [:]

    /// - Parameter retention: the same as the services' (its key finds the cooldown list's entries).
    public init(
        clock: any LedgerClock, policies: Policies = .standard, retention: Retention = .development, masterKey: MasterKey? = nil
    ) throws {
        self.clock = clock
        self.policies = policies
        self.retention = retention
        self.implied = ImpliedMessages(masterKey: try masterKey ?? MasterKey.generate())
    }

    public func execute(
        _ accountID: UUID, outbox messages: [OutboxMessage], _ command: @Sendable (AccountState) throws -> AccountCommand
    ) async throws -> (AccountState, [AccountEvent]) {
        let now = clock.now()
        let state = states[accountID] ?? AccountState(accountID: accountID)
        let decided = try command(state)
        let events = try decide(state, decided, DecisionContext(now: now, policies: policies))
        precondition(decided.undeclared(in: events).isEmpty, "docs/events.md: \(decided.name) appends \(decided.undeclared(in: events))")
        guard !events.isEmpty else { return (state, []) }
        let after = events.reduce(into: state) { evolve(&$0, $1, at: now) }
        try guardClaims(events, after: after, before: state, at: now)
        let notifications = events.compactMap { if case .appleNotificationReceived(let r) = $0 { r.notificationID } else { nil } }
        guard appleNotificationIDs.isDisjoint(with: notifications) else { throw AppleNotificationSeen() }
        appleNotificationIDs.formUnion(notifications)
        index(after, before: state, events: events, at: now)
        states[accountID] = after
        streams[accountID, default: []] += events.map { ($0, now) }
        // As PostgresAccountRepository: what the change asked for may take its language, an alert never.
        outbox += messages.map { $0.inLocale(before: state, after: after, default: policies.defaultLanguage) }
        outbox += try implied.messages(for: events, before: state, after: after, at: now).map {
            $0.inLocale(before: state, after: nil, default: policies.defaultLanguage)
        }
        for case .providerTokensStored(let stored) in events {
            let grant = revocations.grant(
                of: .init(provider: stored.provider, subject: stored.subject, clientID: stored.clientID, refreshToken: stored.refreshToken))
            outbox.removeAll { $0.details?[ProviderTokenRevocations.grantDetail] == grant }
        }
        return (after, events)
    }

    /// As `PostgresAccountImports`: each record alone (a refused one changes nothing), a record
    /// already in skipped; a dry run puts everything back.
    public func importBatch(_ accounts: [AccountCommand.ImportedAccount], dryRun: Bool) async throws -> [ImportResult] {
        let saved = (states, streams, imports)
        var results: [ImportResult] = []
        for account in accounts {
            let key = Hex.encode(retention.key(.imported(source: account.source, externalID: account.externalID)))
            if let accountID = imports[key] {
                results.append(.skipped(accountID: accountID))
                continue
            }
            let accountID = UUID()
            do {
                _ = try await execute(accountID) { _ in .importAccount(account) }
                imports[key] = accountID
                results.append(.imported(accountID: accountID))
            } catch {
                guard let refusal = ImportRefusal(refusing: error) else { throw error }
                results.append(.refused(refusal))
            }
        }
        if dryRun { (states, streams, imports) = saved }
        return results
    }

    /// As the PostgreSQL repository: an identifier on the cooldown list is `signup_cooldown`,
    /// one another live account holds (or a handle anyone holds) is `ClaimTaken`.
    private func guardClaims(_ events: [AccountEvent], after: AccountState, before: AccountState, at now: Date) throws {
        for identifier in Retention.Identifier.claimed(by: events) {
            if let listed = cooldowns[Hex.encode(retention.key(identifier))], listed.listing.until > now,
                listed.owner != after.accountID
            {
                throw retention.refusal(listed.listing.reason)
            }
        }
        let others = states.values.filter { $0.accountID != after.accountID }
        let live = others.filter { !$0.isDeleted }
        if let email = after.email, email != before.email,
            live.contains(where: { $0.email.map(EmailAddress.normalize) == EmailAddress.normalize(email) })
        {
            throw ClaimTaken(claim: .email)
        }
        if let handle = after.handle, handle != before.handle, others.contains(where: { $0.handle?.lowercased() == handle.lowercased() }) {
            throw ClaimTaken(claim: .handle)
        }
        if let phone = after.phone, phone != before.phone, live.contains(where: { $0.phone == phone }) {
            throw ClaimTaken(claim: .phone)
        }
        for (provider, subject) in after.providerSubjects where before.providerSubjects[provider] != subject {
            if live.contains(where: { $0.providerSubjects[provider] == subject }) {
                throw ClaimTaken(claim: provider == .apple ? .apple : .google)
            }
        }
        for passkey in after.passkeys.values where before.passkeys[passkey.id] == nil {
            if live.contains(where: { $0.passkey(credentialID: passkey.credentialID) != nil }) { throw ClaimTaken(claim: .passkey) }
        }
    }

    /// Puts a keyed identifier on the list; the longest listing wins, with its owner.
    private func list(_ listing: Retention.Listing, owner: UUID) {
        if let earlier = cooldowns[listing.key], earlier.listing.until > listing.until { return }
        cooldowns[listing.key] = (listing, owner)
    }

    private func index(_ after: AccountState, before: AccountState, events: [AccountEvent], at now: Date) {
        for (sessionID, session) in before.sessions where after.sessions[sessionID]?.refreshTokenHash != session.refreshTokenHash {
            spentRefreshTokens[session.refreshTokenHash] = SessionRef(accountID: after.accountID, sessionID: sessionID)
        }
        for (linkID, link) in before.pendingLinks where after.pendingLinks[linkID] == nil && link.expiresAt > now {
            usedLinks.insert(linkID)
        }
        for listing in Retention.Listing.listed(by: events) { list(listing, owner: after.accountID) }
        for event in events {
            switch event {
            case .emailVerificationSent(let sent): remember(sent.tokenHash, sent.linkID, .verifyEmail, of: after.accountID)
            case .passwordResetRequested(let sent): remember(sent.tokenHash, sent.linkID, .passwordReset, of: after.accountID)
            case .reauthLinkSent(let sent): remember(sent.tokenHash, sent.linkID, .reauth, of: after.accountID)
            case .emailChangeRequested(let sent): remember(sent.tokenHash, sent.linkID, .emailChange, of: after.accountID)
            case .emailAddRequested(let requested): remember(requested.tokenHash, requested.linkID, .emailAdd, of: after.accountID)
            case .emailRemoved(let removed):
                if let linkID = removed.revertLinkID { remember(removed.revertTokenHash, linkID, .emailRevert, of: after.accountID) }
            case .emailChanged(let changed):
                remember(changed.revertTokenHash, changed.revertLinkID, .emailRevert, of: after.accountID)
            default: break
            }
        }
    }

    private func remember(_ tokenHash: String?, _ linkID: UUID, _ purpose: AccountState.PendingLink.Purpose, of accountID: UUID) {
        if let tokenHash { links[tokenHash] = (accountID, linkID, purpose) }
    }

    /// How many account events are stored, of `type` when given.
    public func eventCount(type: String? = nil) -> Int {
        streams.values.reduce(0) { $0 + $1.count { type == nil || $0.event.type == type } }
    }

    /// How many accounts exist (deleted ones included).
    public var accountCount: Int { states.count }

    /// Every account's state.
    public var allStates: [AccountState] { Array(states.values) }

    public func park(_ message: OutboxMessage, accountID: UUID) async throws {
        outbox.append(message)
    }

    public func history(_ accountID: UUID) async throws -> [RecordedEvent] {
        try (streams[accountID] ?? []).enumerated().map { index, stored in
            RecordedEvent(
                cursor: FeedCursor(transactionID: 0, position: Int64(index + 1)), eventID: UUID(), streamID: accountID,
                streamVersion: Int64(index + 1), type: stored.event.type, schemaVersion: stored.event.schemaVersion,
                subjectID: accountID, payload: try stored.event.encodedPayload(), metadataJSON: "{}", recordedAt: stored.recordedAt)
        }
    }

    public func load(_ accountID: UUID) async throws -> AccountState {
        let state = states[accountID] ?? AccountState(accountID: accountID)
        if let action = afterNextLoad.removeValue(forKey: accountID) { try await action() }
        return state
    }

    /// Runs `action` once, after the next `load` of `accountID` has read the state it returns.
    public func afterNextLoad(of accountID: UUID, _ action: @escaping @Sendable () async throws -> Void) {
        afterNextLoad[accountID] = action
    }

    /// Live accounts only: a deletion frees the account's email, number and provider identities.
    private var liveStates: some Sequence<AccountState> { states.values.lazy.filter { !$0.isDeleted } }

    /// Whether the account exists and is not deleted.
    func isLive(_ accountID: UUID) -> Bool {
        states[accountID].map { $0.exists && !$0.isDeleted } ?? false
    }

    public func credentials(forEmail normalizedEmail: String) async throws -> (accountID: UUID, passwordHash: String?)? {
        liveStates.first { $0.email.map(EmailAddress.normalize) == normalizedEmail }.map { ($0.accountID, $0.passwordHash) }
    }

    private func liveSession(_ hash: [UInt8], at time: Date) -> (AccountState, AccountState.Session)? {
        let hex = Hex.encode(hash)
        for state in states.values {
            if let session = state.sessions.values.first(where: {
                $0.accessTokenHash == hex && $0.revokedAt == nil && $0.accessExpiresAt > time
            }) {
                return (state, session)
            }
        }
        return nil
    }

    public func session(forAccessHash hash: [UInt8], at time: Date) async throws -> SessionRef? {
        liveSession(hash, at: time).map { SessionRef(accountID: $0.0.accountID, sessionID: $0.1.id) }
    }

    public func session(forRefreshHash hash: [UInt8]) async throws -> SessionRef? {
        let hex = Hex.encode(hash)
        for state in states.values {
            if let session = state.sessions.values.first(where: { $0.refreshTokenHash == hex }) {
                return SessionRef(accountID: state.accountID, sessionID: session.id)
            }
        }
        return spentRefreshTokens[hex]
    }

    public func handleHolder(_ handle: Handle) async throws -> UUID? {
        states.values.first { $0.handle?.lowercased() == handle.normalized }?.accountID
    }

    public func accounts(withPublicID publicID: PublicUserID) async throws -> [UUID] {
        states.keys.filter { PublicUserID(accountID: $0) == publicID }.sorted { $0.uuidString < $1.uuidString }
    }

    public func isHandleFree(_ handle: Handle) async throws -> Bool {
        !states.values.contains { $0.handle?.lowercased() == handle.normalized }
    }

    public func listing(keyHash: [UInt8], at time: Date) async throws -> (reason: Retention.Listing.Reason, accountID: UUID)? {
        cooldowns[Hex.encode(keyHash)].flatMap { $0.listing.until > time ? ($0.listing.reason, $0.owner) : nil }
    }

    public func providerOwner(_ provider: IdentityProvider, subject: String) async throws -> UUID? {
        liveStates.first { $0.providerSubjects[provider] == subject }?.accountID
    }

    public func phoneOwner(_ e164: String) async throws -> UUID? {
        liveStates.first { $0.phone == e164 }?.accountID
    }

    public func passkeyOwner(credentialID: String) async throws -> (accountID: UUID, passkeyID: UUID)? {
        for state in liveStates {
            if let passkey = state.passkey(credentialID: credentialID) { return (state.accountID, passkey.id) }
        }
        return nil
    }

    public func isEmailFree(_ email: EmailAddress) async throws -> Bool {
        !liveStates.contains { $0.email.map(EmailAddress.normalize) == email.normalized }
    }

    public func emailHolder(_ email: EmailAddress) async throws -> (accountID: UUID, verified: Bool)? {
        liveStates.first { $0.email.map(EmailAddress.normalize) == email.normalized }.map { ($0.accountID, $0.emailVerified) }
    }

    public func summary(forAccessHash hash: [UInt8], at time: Date) async throws -> (session: SessionRef, summary: AccountSummary)? {
        liveSession(hash, at: time).map { (SessionRef(accountID: $0.0.accountID, sessionID: $0.1.id), AccountSummary($0.0)) }
    }

    public func introspect(accessHash hash: [UInt8], at time: Date) async throws -> Introspection? {
        liveSession(hash, at: time).map {
            Introspection(accountID: $0.0.accountID, sessionID: $0.1.id, emailVerified: $0.0.emailVerified, expiresAt: $0.1.accessExpiresAt)
        }
    }

    public func liveSessions(forAccessHash hash: [UInt8], at time: Date) async throws -> (session: SessionRef, sessions: [SessionListing])?
    {
        guard let (state, current) = liveSession(hash, at: time) else { return nil }
        return (SessionRef(accountID: state.accountID, sessionID: current.id), listing(state, at: time))
    }

    private func listing(_ state: AccountState, at time: Date) -> [SessionListing] {
        state.sessions.values.map { $0 }
            .filter { $0.isActive && $0.refreshExpiresAt > time }
            .map { session in
                SessionListing(
                    sessionID: session.id, method: session.method, device: session.device, createdAt: session.createdAt,
                    lastUsedAt: max(session.lastUsedAt, touched[session.id] ?? .distantPast))
            }
            .sorted { ($0.lastUsedAt, $0.createdAt) > ($1.lastUsedAt, $1.createdAt) }
    }

    public func touch(_ uses: [SessionUse], interval: TimeInterval) async throws {
        for use in uses {
            let session = use.session
            guard let live = states[session.accountID]?.sessions[session.sessionID], live.isActive else { continue }
            let last = max(live.lastUsedAt, touched[session.sessionID] ?? .distantPast)
            if last < use.usedAt.addingTimeInterval(-interval) { touched[session.sessionID] = use.usedAt }
        }
    }

    public func link(
        forTokenHash hash: [UInt8], purpose: AccountState.PendingLink.Purpose
    ) async throws -> (accountID: UUID, linkID: UUID)? {
        guard let found = links[Hex.encode(hash)], found.purpose == purpose, !usedLinks.contains(found.linkID) else { return nil }
        return (found.accountID, found.linkID)
    }
}
