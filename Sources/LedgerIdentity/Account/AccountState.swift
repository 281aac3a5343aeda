import Foundation

/// An account as its events leave it: the fold of its stream.
public struct AccountState: Sendable, Equatable {
    public var accountID: UUID
    /// The stream version this state reflects (0: no account).
    public var version: Int64 = 0
    public var createdAt: Date?
    public var email: String?
    public var emailVerified = false
    public var passwordHash: String?
    public var passwordChangedAt: Date?
    public var displayName: String?
    public var handle: String?
    public var handleIsTemporary = false
    /// E.164, when the account signs in by phone.
    public var phone: String?
    public var phoneRegion: String?
    /// The linked Apple and Google subjects (`sub`).
    public var providerSubjects: [IdentityProvider: String] = [:]
    /// The providers' refresh tokens the account holds, to revoke them at the provider.
    public var providerTokens: [IdentityProvider: ProviderToken] = [:]
    /// What backends report as blocking deletion, by reference.
    public var holds: [String: Hold] = [:]
    public var deletedAt: Date?
    public var purgeAfter: Date?
    public var purgedAt: Date?
    /// Disabled by an operator (`account.disabled`), and why; nil when enabled.
    public var disabledAt: Date?
    public var disabledReason: String?
    /// The latest Apple notifications acted on (their ids), so a repeated one acts no more.
    public var appleNotificationIDs: [String] = []
    /// A deletion asked for while holds blocked it (`account.deletion_requested`), still to be scheduled.
    public var deletionRequestedAt: Date?
    /// "Verify it's you" grants, by grant id (expired ones stay until they are pruned by time).
    public var reauthGrants: [UUID: ReauthGrant] = [:]
    /// Nonces for re-auth by Apple or Google, by id, until used or expired.
    public var reauthNonces: [UUID: ReauthNonce] = [:]
    public var sessions: [UUID: Session] = [:]
    /// Email links issued and still outstanding, by id.
    public var pendingLinks: [UUID: PendingLink] = [:]
    /// When links of each purpose were sent, for the resend limit.
    public var linkSendTimes: [PendingLink.Purpose: [Date]] = [:]
    /// The authenticator app's secret: pending until a first code confirms it, then in force.
    public var totp: TOTPState?
    /// SHA-256 (hex) of the recovery codes not used yet.
    public var recoveryCodeHashes: [String] = []
    /// Sign-ins waiting for their second factor, by challenge id.
    public var mfaChallenges: [UUID: MFAChallenge] = [:]
    /// The devices sessions came from (their `device_token`s' ids), most recent last, at most
    /// `maximumKnownDevices`: a sign-in from any other is a new device (`new_sign_in`).
    public var knownDevices: [UUID] = []
    /// How each sign-in method the account has now came to it (`phone`, `apple`, `google`):
    /// what a revert reads to undo the methods added in its span.
    public var methodOrigins: [String: MethodOrigin] = [:]
    /// An address `add-with-password` is waiting to have confirmed (`pending_email`), with the
    /// password that comes with it.
    public var pendingEmail: PendingEmail?
    /// The language of the latest sign-in that said one: the account's messages are in it.
    public var locale: String?
    /// The account's passkeys, by the service's id.
    public var passkeys: [UUID: Passkey] = [:]
    /// The WebAuthn user handle (base64url) every passkey of the account carries: random, set
    /// by the first registration, never the account id or an address.
    public var passkeyUserHandle: String?
    /// Since when passkeys are all that vouches for the account (nil while anything else does):
    /// one passkey vouches for removing another only after `passkeyVouchingDelay`.
    public var passkeyOnlySince: Date?
    /// When a revert last ended every pending code: a sign-in code sent before it starts no session.
    public var codesEndedAt: Date?
    /// The system an import brought the account from (`account.imported`'s `source`).
    public var importedFrom: String?
    /// The uploaded picture's version (`avatar.set`), nil while the account shows its initials tile.
    public var avatarETag: String?
    /// The language chosen in the profile (`profile.locale_set`): before the sign-ins' `locale`.
    public var chosenLocale: String?

    /// The language the account's messages are written in: the one chosen, else the latest
    /// sign-in's, when either is one the service writes (`Language`).
    public var messageLocale: String? { Language.firstSupported([chosenLocale, locale]) }

    public var exists: Bool { createdAt != nil }
    public var isDeleted: Bool { deletedAt != nil }
    public var isDisabled: Bool { disabledAt != nil }
    public var hasPassword: Bool { passwordHash != nil }

    /// Whether `add-with-password` may give the account `email` and a password: it has no
    /// email, or only an Apple private-relay one (which the address replaces once confirmed), or
    /// exactly this one without a password (an address from Apple or Google).
    public func canAddPassword(for email: EmailAddress) -> Bool {
        guard let current = self.email else { return true }
        if EmailAddress.normalize(current) == email.normalized { return !hasPassword }
        return EmailAddress.isPrivateRelay(current)
    }

    /// Whether a provider identity may join this account by the address it vouches for, with
    /// no sign-in to the account: both verified the address (never an Apple private-relay
    /// one), the account still holds it, and has neither a password (set, maybe, by whoever
    /// registered the address before its owner, or by an intruder) nor a second factor.
    public func acceptsProviderMerge(of identity: AccountCommand.ProviderIdentityClaim) -> Bool {
        guard identity.emailVerified, let email = identity.email.flatMap(EmailAddress.init), !EmailAddress.isPrivateRelay(email.value)
        else { return false }
        return exists && !isDeleted && emailVerified && !isTOTPEnabled && !hasPassword
            && self.email.map(EmailAddress.normalize) == email.normalized
    }

    /// A provider's refresh token for the account's linked identity, as the token endpoint gave it.
    public struct ProviderToken: Sendable, Equatable {
        public var provider: IdentityProvider
        /// The provider user (`sub`) it belongs to.
        public var subject: String
        /// The app's client id the token was issued to.
        public var clientID: String
        public var refreshToken: String

        public init(provider: IdentityProvider, subject: String, clientID: String, refreshToken: String) {
            self.provider = provider
            self.subject = subject
            self.clientID = clientID
            self.refreshToken = refreshToken
        }
    }

    public struct Session: Sendable, Equatable {
        public var id: UUID
        public var method: String
        public var device: String?
        public var createdAt: Date
        public var lastUsedAt: Date
        public var accessTokenHash: String
        public var refreshTokenHash: String
        public var accessExpiresAt: Date
        public var refreshExpiresAt: Date
        public var revokedAt: Date?
        public var revokedReason: String?
        /// The device it came from (its `device_token`'s id); nil for sessions from before devices had ids.
        public var deviceID: UUID?
        /// The second factor its sign-in passed (`totp`, `recovery_code`), nil for none.
        public var secondFactor: String?

        public var isActive: Bool { revokedAt == nil }
    }

    public struct PendingLink: Sendable, Equatable {
        public enum Purpose: String, Sendable, Hashable {
            case verifyEmail = "verify_email", passwordReset = "password_reset", reauth = "reauth_link"
            case emailChange = "email_change", emailRevert = "email_revert", emailAdd = "email_add"
        }
        public var id: UUID
        public var purpose: Purpose
        public var email: String
        public var expiresAt: Date
        /// For re-auth links: the session that asked, which the grant will belong to.
        public var sessionID: UUID?
        /// For revert links: the change of the email (or its removal) the link undoes.
        public var undoes: RevertibleChange?

        public init(
            id: UUID, purpose: Purpose, email: String, expiresAt: Date, sessionID: UUID? = nil, undoes: RevertibleChange? = nil
        ) {
            self.id = id
            self.purpose = purpose
            self.email = email
            self.expiresAt = expiresAt
            self.sessionID = sessionID
            self.undoes = undoes
        }
    }

    /// An email change or removal a revert link undoes: its place in the stream, the session
    /// that made it, and whether the account had a password then (whoever made the change may
    /// know it, so the revert sets a new one).
    public struct RevertibleChange: Sendable, Equatable {
        public var version: Int64
        public var sessionID: UUID?
        public var hadPassword: Bool
        public var at: Date

        public init(version: Int64, sessionID: UUID?, hadPassword: Bool, at: Date) {
            self.version = version
            self.sessionID = sessionID
            self.hadPassword = hadPassword
            self.at = at
        }
    }

    /// Where a sign-in method came from: the stream version of the event that added it, when,
    /// and the signed-in session that added it (nil: a sign-up, or a sign-in that proved the account).
    public struct MethodOrigin: Sendable, Equatable {
        public var version: Int64
        public var sessionID: UUID?
        public var at: Date

        public init(version: Int64, sessionID: UUID?, at: Date) {
            self.version = version
            self.sessionID = sessionID
            self.at = at
        }
    }

    /// An address waiting for its confirmation link, with the password that comes with it.
    public struct PendingEmail: Sendable, Equatable {
        public var email: String
        public var linkID: UUID
        public var passwordHash: String
        public var sessionID: UUID

        public init(email: String, linkID: UUID, passwordHash: String, sessionID: UUID) {
            self.email = email
            self.linkID = linkID
            self.passwordHash = passwordHash
            self.sessionID = sessionID
        }
    }

    public struct ReauthGrant: Sendable, Equatable {
        public var id: UUID
        public var sessionID: UUID
        public var method: String
        /// SHA-256 (hex) of the re-auth token.
        public var tokenHash: String
        public var expiresAt: Date
        /// The passkey that earned a `passkey` grant.
        public var passkeyID: UUID? = nil
    }

    public struct ReauthNonce: Sendable, Equatable {
        public var id: UUID
        public var sessionID: UUID
        /// SHA-256 (hex) of the nonce.
        public var nonceHash: String
        public var expiresAt: Date
    }

    public init(accountID: UUID) {
        self.accountID = accountID
    }

    /// Folds a whole history.
    public static func replay(_ accountID: UUID, _ events: [(AccountEvent, Date)]) -> AccountState {
        events.reduce(into: AccountState(accountID: accountID)) { evolve(&$0, $1.0, at: $1.1) }
    }
}

/// Devices an account remembers for the new sign-in alert: enough for a person's phones,
/// tablets and browsers; a device unseen for that many others is told about again.
public let maximumKnownDevices = 32

/// Sign-ins waiting for their second factor an account holds at once; the oldest goes first.
public let maximumOpenChallenges = 20

/// How many Apple notification ids an account remembers: Apple repeats a notification soon if at
/// all, and the state must not grow with every one.
public let appleNotificationMemory = 32
