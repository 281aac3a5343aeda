import Foundation
import LedgerEvents
import LedgerIdentity

/// Where accounts live: their streams and the projections that index them.
public protocol AccountRepository: Sendable {
    /// Runs a command against an account in one transaction: lock its stream, fold its
    /// events, `decide`, append, update the projections. `command` sees the current state
    /// and may refuse by throwing. Returns the state after the events and the events.
    /// `outbox` holds the messages the command sends; they are written in the same
    /// transaction, and only when the command produced events, together with the messages the
    /// events imply (`ProviderTokenRevocations`: a revoked provider token's revocation).
    func execute(
        _ accountID: UUID, outbox: [OutboxMessage], _ command: @Sendable (AccountState) throws -> AccountCommand
    ) async throws -> (AccountState, [AccountEvent])

    /// Seals the provider refresh tokens that wait in the outbox to be revoked.
    var revocations: ProviderTokenRevocations { get }

    /// The rules `decide` applies to every command here (`DecisionContext`); the services read
    /// the same value through `AccountsEnvironment`.
    var policies: Policies { get }

    /// Writes a message outside any command, due at its `notBefore`: the revocation of a
    /// provider token whose sign-in is not done (`link_required`), withdrawn when the token is
    /// kept (`provider.tokens_stored` naming it).
    func park(_ message: OutboxMessage, accountID: UUID) async throws

    /// The account's stream, decrypted where its key lives.
    func history(_ accountID: UUID) async throws -> [RecordedEvent]

    /// The account's current state (empty when it does not exist).
    func load(_ accountID: UUID) async throws -> AccountState

    /// The account that claims this email (compared lower-cased), with its password hash.
    func credentials(forEmail normalizedEmail: String) async throws -> (accountID: UUID, passwordHash: String?)?

    /// The live session an access token (by hash) belongs to.
    func session(forAccessHash hash: [UInt8], at time: Date) async throws -> SessionRef?

    /// The session a refresh token (current or spent, by hash) belongs to.
    func session(forRefreshHash hash: [UInt8]) async throws -> SessionRef?

    /// The account holding this handle (ignoring case), deleted or not.
    func handleHolder(_ handle: Handle) async throws -> UUID?
    /// Every account whose id carries this short public id (almost always one).
    func accounts(withPublicID publicID: PublicUserID) async throws -> [UUID]
    /// Whether nobody holds this handle (ignoring case).
    func isHandleFree(_ handle: Handle) async throws -> Bool

    /// Why a keyed identifier hash is listed at `time` (a deleted account's, or an address held
    /// for its revert link), and by which account; nil when it is not.
    func listing(keyHash: [UInt8], at time: Date) async throws -> (reason: Retention.Listing.Reason, accountID: UUID)?

    /// The account a provider subject (`sub`) is linked to.
    func providerOwner(_ provider: IdentityProvider, subject: String) async throws -> UUID?

    /// The account whose sign-in phone is this E.164 number.
    func phoneOwner(_ e164: String) async throws -> UUID?

    /// The live account holding the passkey of this credential id (base64url), and the
    /// passkey's id.
    func passkeyOwner(credentialID: String) async throws -> (accountID: UUID, passkeyID: UUID)?

    /// Whether nobody holds this email (ignoring case).
    func isEmailFree(_ email: EmailAddress) async throws -> Bool

    /// The account holding this email (ignoring case), and whether it verified it.
    func emailHolder(_ email: EmailAddress) async throws -> (accountID: UUID, verified: Bool)?

    /// The session and account of a live access token, from the projection, in one query (the
    /// hot read path).
    func summary(forAccessHash hash: [UInt8], at time: Date) async throws -> (session: SessionRef, summary: AccountSummary)?

    /// What a backend learns about an access token: its session, account and expiry.
    func introspect(accessHash hash: [UInt8], at time: Date) async throws -> Introspection?

    /// The session of a live access token and its account's live sessions (not revoked, refresh
    /// token not expired), most recently used first, in one query (the sessions screen).
    func liveSessions(forAccessHash hash: [UInt8], at time: Date) async throws -> (session: SessionRef, sessions: [SessionListing])?

    /// Moves each session's `last_used_at` to its use's time unless it moved less than
    /// `interval` before: operational data, not an event. One write for them all.
    func touch(_ uses: [SessionUse], interval: TimeInterval) async throws

    /// The unused link a token (by hash) belongs to.
    func link(forTokenHash hash: [UInt8], purpose: AccountState.PendingLink.Purpose) async throws -> (accountID: UUID, linkID: UUID)?
}

extension AccountRepository {
    /// A command that sends nothing.
    public func execute(
        _ accountID: UUID, _ command: @Sendable (AccountState) throws -> AccountCommand
    ) async throws -> (AccountState, [AccountEvent]) {
        try await execute(accountID, outbox: [], command)
    }
}

/// A session found by one of its tokens.
public struct SessionRef: Sendable, Hashable {
    public let accountID: UUID
    public let sessionID: UUID

    public init(accountID: UUID, sessionID: UUID) {
        self.accountID = accountID
        self.sessionID = sessionID
    }
}

/// A row of the sessions screen.
public struct SessionListing: Sendable, Equatable {
    public let sessionID: UUID
    public let method: String
    public let device: String?
    public let createdAt: Date
    public let lastUsedAt: Date

    public init(sessionID: UUID, method: String, device: String?, createdAt: Date, lastUsedAt: Date) {
        self.sessionID = sessionID
        self.method = method
        self.device = device
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A live access token's facts, for `POST /sessions/introspect`.
public struct Introspection: Sendable, Equatable {
    public let accountID: UUID
    public let sessionID: UUID
    public let emailVerified: Bool
    public let expiresAt: Date

    public init(accountID: UUID, sessionID: UUID, emailVerified: Bool, expiresAt: Date) {
        self.accountID = accountID
        self.sessionID = sessionID
        self.emailVerified = emailVerified
        self.expiresAt = expiresAt
    }
}

/// A unique claim (email, handle) was already held when the command tried to take it.
public struct ClaimTaken: Error, Sendable, Equatable {
    public enum Claim: Sendable { case email, handle, phone, apple, google, passkey }
    public let claim: Claim

    public init(claim: Claim) {
        self.claim = claim
    }

    /// The claim behind a unique violation of a projection's constraint (by its name).
    public init(constraint: String?) {
        let name = constraint ?? ""
        claim =
            name.contains("passkey")
            ? .passkey
            : name.contains("handle")
                ? .handle
                : name.contains("phone")
                    ? .phone
                    : name.contains("apple") ? .apple : name.contains("google") ? .google : .email
    }
}
