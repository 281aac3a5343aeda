import Foundation

/// What a caller asks of an account. Impure inputs (password hashes, token hashes, ids,
/// expiry times) are made before `decide`, so `decide` stays a pure function.
public enum AccountCommand: Sendable, Equatable {
    case register(Registration)
    /// An account from another system, with what it brought (`ImportedAccount`).
    case importAccount(ImportedAccount)
    /// A session for a sign-in whose credential was checked before the lock: started only
    /// while the account still holds it (`SignInProof`).
    case startSession(NewSession, proof: SignInProof)
    /// Exchange a refresh token (by its hash) for a new pair. The hash is one the session was
    /// issued (the token index found it under `sessionID`): when it is no longer the session's
    /// current one it was spent, and presenting it again revokes the session. The state keeps
    /// no list of spent hashes, which would grow by one for every refresh for the session's life.
    case refreshSession(sessionID: UUID, presentedRefreshHash: String, replacement: SessionTokens)
    case revokeSession(sessionID: UUID, reason: String)
    /// "Sign out all other devices": every live session but `keep` ends.
    case revokeOtherSessions(keep: UUID)
    case sendVerificationLink(NewLink)
    case confirmVerificationLink(linkID: UUID)
    /// A link that proves an address (`confirmVerificationLink`, `confirmEmailChange` or
    /// `confirmEmailAdd`), then a session for the device that opened it, in one decision: the
    /// seeds' "validates token, applies change, issues new session" (docs/accounts.md).
    indirect case signInByLink(AccountCommand, NewSession)
    case sendPasswordResetLink(NewLink)
    case resetPassword(linkID: UUID, newPasswordHash: String)
    /// The hash a sign-in checked (`replacing`), made again at today's cost; nothing when the
    /// password changed meanwhile (a rehash of the old one must not bring it back).
    case rehashPassword(replacing: String, newPasswordHash: String)
    /// `locale`: a `Language` tag, or `.some(nil)` to go back to the sign-ins' language.
    case updateProfile(displayName: String??, handle: Handle?, locale: String?? = nil)
    /// A wrong password at sign-in (the `failures`-th in the window), and the lockout when it
    /// reached the limit: every failure is on the account's history.
    case recordLoginFailure(failures: Int, lockedUntil: Date?)
    /// A new account whose first sign-in method is a verified phone number.
    case registerByPhone(PhoneRegistration)
    /// Adds a verified phone number to an account without one; needs re-auth (`add_method`).
    case linkPhone(PhoneNumber, requestID: UUID?, sessionID: UUID, reauthTokenHash: String?)
    /// Moves the account to a verified new number; needs re-auth unless the phone is the only method.
    case changePhone(PhoneNumber, requestID: UUID?, sessionID: UUID, reauthTokenHash: String?)
    /// "Verify it's you" passed in `sessionID`. For Apple and Google, `presentedNonceHashes`
    /// are the ways the ID token's `nonce` claim may name a live nonce of this session (its
    /// SHA-256, or the claim itself when the app sent the hash); that nonce is used up.
    case grantReauth(sessionID: UUID, NewGrant, presentedNonceHashes: [String]? = nil)
    /// A one-use nonce for re-auth by Apple or Google, bound to `sessionID`.
    case issueReauthNonce(sessionID: UUID, NewNonce)
    case recordReauthFailure(sessionID: UUID, method: ReauthMethod)
    /// Wrong second factors (TOTP or recovery codes at sign-in, TOTP codes of a session's
    /// re-auths) reached the day's limit (`LEDGER_MFA_DAILY_FAILURE_LIMIT`) and TOTP codes are
    /// refused `until`: the owner's verified address is told. `sessionID` is the session
    /// whose re-auths spent its own day; nil for the account's sign-ins.
    case recordMFADailyLimit(until: Date, sessionID: UUID?)
    /// Emails a re-auth link whose grant will belong to `sessionID`.
    case sendReauthLink(NewLink, sessionID: UUID)
    case confirmReauthLink(linkID: UUID, NewGrant)
    /// A new password for an account that has one; needs re-auth unless it is the only method.
    case changePassword(newPasswordHash: String, sessionID: UUID, reauthTokenHash: String?)
    /// Email and password for an account without an email (or with only an Apple private-relay
    /// one): nothing is claimed until the address's confirmation link (`link`) is used
    /// (`confirmEmailAdd`). For the account's own verified address (from Apple or Google), the
    /// password is set at once. Needs re-auth (`add_method`).
    case addEmailAndPassword(EmailAddress, passwordHash: String, link: NewLink, sessionID: UUID, reauthTokenHash: String?)
    /// Another account proved `email` by its confirmation link: this account, which holds the
    /// address without ever having verified it, gives it up (with the password that came with
    /// it). Nothing when it holds another address or has verified this one.
    case releaseUnprovenEmail(EmailAddress)
    /// The confirmation link of `add-with-password` was used, while the session that asked is
    /// live: the address becomes the account's verified email, and the password that waited
    /// with it is set. A verified (Apple private-relay) address it replaces gets `revertLink`
    /// and is held (`previousEmailKey`), as after a change.
    case confirmEmailAdd(linkID: UUID, revertLink: NewLink? = nil, previousEmailKey: String? = nil)
    /// Sends a confirmation link to `newEmail`; needs re-auth unless email + password is the only method.
    case requestEmailChange(EmailAddress, link: NewLink, sessionID: UUID, reauthTokenHash: String?)
    /// The new address's link was used: the change applies, and the old address gets `revertLink`.
    case confirmEmailChange(linkID: UUID, revertLink: NewLink, previousEmailKey: String? = nil)
    /// The old address's revert link (of an email change or removal) was used: the address
    /// comes back, every session ends, the methods added in the span it undoes go, and the
    /// password becomes `newPasswordHash` (required when the account had one at the change).
    case revertEmail(linkID: UUID, newPasswordHash: String?)
    /// A new account whose first sign-in method is an Apple or Google identity.
    case registerByProvider(ProviderRegistration)
    /// Connects a verified provider identity (idempotent for the same subject). From a
    /// signed-in session (`sessionID` set) it needs re-auth (`add_method`); without one, a
    /// sign-in to this account proved it (a `link_token`). With `adoptsEmail`, an account
    /// without an email takes the address the provider vouches for as its verified email (the
    /// service found nobody holding it).
    case linkProvider(ProviderIdentityClaim, sessionID: UUID?, reauthTokenHash: String?, adoptsEmail: Bool = false)
    /// The sign-in merge: a provider identity joins the account holding the address it vouches
    /// for, with no sign-in to that account, only while the account may be joined so
    /// (`AccountState.acceptsProviderMerge`, judged here under the stream lock); else
    /// `link_required`, and the person proves the account once.
    case mergeProvider(ProviderIdentityClaim)
    /// Keeps the refresh token a sign-in's authorization code fetched, for the identity linked
    /// to the account (a newer one replaces it: nothing is revoked then, since revoking one of
    /// Apple's or Google's tokens ends the person's whole consent).
    /// `parkedRevocation`: the revocation that waits in the outbox for a token whose sign-in was
    /// not done; storing the token withdraws it.
    case storeProviderTokens(AccountState.ProviderToken, parkedRevocation: UUID? = nil)
    /// Disconnects a provider: never the last sign-in method, and only with re-auth.
    case unlinkProvider(IdentityProvider, sessionID: UUID, reauthTokenHash: String?)
    /// An operator disables the account (`accounts:admin`): every session ends and no sign-in
    /// starts one until it is enabled again. Disabling a disabled account changes nothing.
    case disableAccount(reason: String)
    case enableAccount
    /// Apple told the service about the account's Apple ID (a server-to-server notification).
    case handleAppleNotification(AppleNotice)
    /// Schedules a deletion asked for while holds blocked it, once none blocks it any more.
    case completeRequestedDeletion(purgeDelay: TimeInterval, cooldown: TimeInterval, cooldownKeys: [String])
    /// Removes the sign-in phone number: never the last sign-in method, and only with re-auth.
    case removePhone(sessionID: UUID, reauthTokenHash: String?)
    /// Removes the email and its password: never the last sign-in method, and only with re-auth.
    /// A verified address gets `revertLink` and is held from other accounts (`emailKey`, its
    /// keyed hash) while the link lives.
    case removeEmail(sessionID: UUID, reauthTokenHash: String?, revertLink: NewLink? = nil, emailKey: String? = nil)
    /// A backend reports (or updates) a hold; the same content again changes nothing. The
    /// hold's `keyID` is the reporting key: another key's hold with the same ref is not found.
    case placeHold(Hold)
    /// Releases a hold placed by `keyID`; another key's hold is not found, unless the key is an
    /// administrator's (`admin` scope), which clears what a revoked key left behind.
    case releaseHold(ref: String, keyID: String?, administrator: Bool = false)
    /// Ends the session and booking holds that have started (`hold.lapsed`); nothing when none
    /// has, or the account is deleted.
    case lapseHolds
    /// Begins (or begins again) a TOTP enrolment with `secret`; needs re-auth (`manage_mfa`).
    case startTOTPEnrolment(secret: String, sessionID: UUID, reauthTokenHash: String?)
    /// Turns TOTP on with its first code (`step`: the time step the code matched, nil for none)
    /// and the hashes of the recovery codes shown once.
    case confirmTOTP(step: Int64?, recoveryCodeHashes: [String], sessionID: UUID)
    /// Turns TOTP off (or drops a pending enrolment); needs re-auth (`manage_mfa`).
    case disableTOTP(sessionID: UUID, reauthTokenHash: String?)
    /// New recovery codes, the old ones void; needs re-auth (`manage_mfa`).
    case regenerateRecoveryCodes([String], sessionID: UUID, reauthTokenHash: String?)
    /// Answers a sign-in's second-factor challenge (by id and token hash): right, a session
    /// starts; wrong, it counts, and the fifth wrong answer ends the challenge.
    case completeMFAChallenge(challengeID: UUID, tokenHash: String, proof: MFAProof, session: NewSession)
    /// "Verify it's you" by a TOTP code (`step`: the time step it matched, nil for none).
    case grantReauthByTOTP(sessionID: UUID, NewGrant, step: Int64?)
    /// Deletes the account: re-auth, no blockers, then every session ends.
    case deleteAccount(sessionID: UUID, reauthTokenHash: String?, purgeDelay: TimeInterval, cooldown: TimeInterval, cooldownKeys: [String])
    /// Adds a passkey whose registration the relying party verified (the event to record, its
    /// `session_id` set by `decide`); needs re-auth (`add_method`). The user handle is the one the
    /// registration's options carried: the account's own, or the new one this registration gives it.
    case registerPasskey(AccountEvent.PasskeyRegistered, sessionID: UUID, reauthTokenHash: String?)
    /// Names a passkey (no re-auth: a name opens nothing).
    case renamePasskey(passkeyID: UUID, name: String)
    /// Removes a passkey: never the last sign-in method, and only with re-auth (`manage_passkeys`).
    case removePasskey(passkeyID: UUID, sessionID: UUID, reauthTokenHash: String?)
    /// A verified assertion of one of the account's passkeys signs in. User verification makes
    /// it two factors at once, so no second-factor challenge is issued.
    case signInWithPasskey(PasskeyAssertion, session: NewSession)
    /// "Verify it's you" by a verified assertion of one of the account's passkeys.
    case grantReauthByPasskey(sessionID: UUID, NewGrant, PasskeyAssertion)
    /// An assertion valid but for its counter, which did not grow past the stored one: recorded
    /// (`passkey.suspect`) when the stored counter, read under the stream's lock, still says so.
    case recordPasskeySuspect(passkeyID: UUID, presentedSignCount: Int64)
    /// A call of the support desk, recorded (`admin.*`) before whatever it does.
    case support(SupportCall)
    /// A new picture for the account, stored (sealed) under `etag` in the same transaction.
    case setAvatar(etag: String, sessionID: UUID)
    /// The picture goes: the account shows its initials tile again.
    case removeAvatar(sessionID: UUID)

    /// A provider identity as a verified ID token gave it.
    public struct ProviderIdentityClaim: Sendable, Equatable {
        public var provider: IdentityProvider
        public var subject: String
        public var email: String?
        public var emailVerified: Bool

        public init(provider: IdentityProvider, subject: String, email: String?, emailVerified: Bool) {
            self.provider = provider
            self.subject = subject
            self.email = email
            self.emailVerified = emailVerified
        }
    }

    public struct ProviderRegistration: Sendable, Equatable {
        public var identity: ProviderIdentityClaim
        /// The account's email: the provider's address when it is free, else none.
        public var email: EmailAddress?
        public var displayName: String?
        public var handle: Handle
        public var session: NewSession

        public init(identity: ProviderIdentityClaim, email: EmailAddress?, displayName: String?, handle: Handle, session: NewSession) {
            self.identity = identity
            self.email = email
            self.displayName = displayName
            self.handle = handle
            self.session = session
        }
    }

    public struct PhoneRegistration: Sendable, Equatable {
        public var phone: PhoneNumber
        public var requestID: UUID?
        public var handle: Handle
        public var session: NewSession

        public init(phone: PhoneNumber, requestID: UUID?, handle: Handle, session: NewSession) {
            self.phone = phone
            self.requestID = requestID
            self.handle = handle
            self.session = session
        }
    }

    /// A re-auth nonce about to be handed out: it lasts `lifetime` from the moment it is recorded.
    public struct NewNonce: Sendable, Equatable {
        public var nonceID: UUID
        /// SHA-256 (hex) of the nonce.
        public var nonceHash: String
        public var lifetime: TimeInterval

        public init(nonceID: UUID, nonceHash: String, lifetime: TimeInterval) {
            self.nonceID = nonceID
            self.nonceHash = nonceHash
            self.lifetime = lifetime
        }
    }

    /// A re-auth grant about to be made: it lasts `lifetime` from the moment it is recorded.
    public struct NewGrant: Sendable, Equatable {
        public var grantID: UUID
        public var method: ReauthMethod
        /// SHA-256 (hex) of the re-auth token.
        public var tokenHash: String
        public var lifetime: TimeInterval

        public init(grantID: UUID, method: ReauthMethod, tokenHash: String, lifetime: TimeInterval) {
            self.grantID = grantID
            self.method = method
            self.tokenHash = tokenHash
            self.lifetime = lifetime
        }
    }

    public struct Registration: Sendable, Equatable {
        public var email: EmailAddress
        public var passwordHash: String
        public var displayName: String?
        public var handle: Handle
        public var handleIsTemporary: Bool
        public var session: NewSession
        public var verificationLink: NewLink

        public init(
            email: EmailAddress, passwordHash: String, displayName: String?, handle: Handle, handleIsTemporary: Bool,
            session: NewSession, verificationLink: NewLink
        ) {
            self.email = email
            self.passwordHash = passwordHash
            self.displayName = displayName
            self.handle = handle
            self.handleIsTemporary = handleIsTemporary
            self.session = session
            self.verificationLink = verificationLink
        }
    }

    public struct SessionTokens: Sendable, Equatable {
        public var accessTokenHash: String
        public var refreshTokenHash: String
        public var accessExpiresAt: Date
        public var refreshExpiresAt: Date

        public init(accessTokenHash: String, refreshTokenHash: String, accessExpiresAt: Date, refreshExpiresAt: Date) {
            self.accessTokenHash = accessTokenHash
            self.refreshTokenHash = refreshTokenHash
            self.accessExpiresAt = accessExpiresAt
            self.refreshExpiresAt = refreshExpiresAt
        }
    }

    public struct NewSession: Sendable, Equatable {
        /// Longer device labels (the client's `User-Agent`) are cut: a label is for the session
        /// list, and a 64 KiB header would otherwise sit in every event and projection row.
        public static let maximumDeviceLength = 200

        public var sessionID: UUID
        public var method: String
        public var device: String?
        public var tokens: SessionTokens
        /// The challenge to issue instead when the account has two-factor authentication on;
        /// a sign-in that brings none is refused there (`mfa_required`), never let through.
        public var stepUp: NewChallenge?
        /// The device it comes from: the id of the `device_token` the client sent (checked as
        /// this account's), or a new one. Nil: the session's own id.
        public var deviceID: UUID?
        /// The language of the sign-in (`Accept-Language`): the account's messages follow the last.
        public var locale: String?
        /// The second factor passed before it started (set by `decide` when a challenge is passed).
        public var secondFactor: String?

        public init(
            sessionID: UUID, method: String, device: String?, tokens: SessionTokens, stepUp: NewChallenge? = nil, deviceID: UUID? = nil,
            locale: String? = nil
        ) {
            self.locale = LanguageTag.normalize(locale)
            self.sessionID = sessionID
            self.method = method
            self.device = device.map { String($0.prefix(Self.maximumDeviceLength)) }
            self.tokens = tokens
            self.stepUp = stepUp
            self.deviceID = deviceID
        }
    }

    /// A sign-in's second-factor challenge, made before `decide` (its token is random).
    public struct NewChallenge: Sendable, Equatable {
        public var challengeID: UUID
        /// SHA-256 (hex) of the `mfa_token`'s secret part.
        public var tokenHash: String
        public var expiresAt: Date
        /// The provider `link_token` the sign-in carried, to link once the challenge is passed.
        public var linkToken: String?
        /// The refresh token a provider sign-in fetched, kept once the challenge is passed; its
        /// revocation waits in the outbox (`parkedRevocationID`) until then.
        public var providerToken: AccountState.ProviderToken?
        public var parkedRevocationID: UUID?

        public init(
            challengeID: UUID, tokenHash: String, expiresAt: Date, linkToken: String?, providerToken: AccountState.ProviderToken? = nil,
            parkedRevocationID: UUID? = nil
        ) {
            self.challengeID = challengeID
            self.tokenHash = tokenHash
            self.expiresAt = expiresAt
            self.linkToken = linkToken
            self.providerToken = providerToken
            self.parkedRevocationID = parkedRevocationID
        }
    }

    /// What answers a second-factor challenge.
    public enum MFAProof: Sendable, Equatable {
        /// A TOTP code: the time step it matched, nil when it matched none.
        case totp(step: Int64?)
        /// A recovery code, by its SHA-256 (hex).
        case recoveryCode(hash: String)

        /// The factor's name as a session records it (`session.started`'s `second_factor`).
        public var factor: String {
            switch self {
            case .totp: "totp"
            case .recoveryCode: "recovery_code"
            }
        }
    }

    public struct NewLink: Sendable, Equatable {
        public var linkID: UUID
        public var expiresAt: Date
        /// SHA-256 (hex) of the token the link carries.
        public var tokenHash: String?

        public init(linkID: UUID, expiresAt: Date, tokenHash: String? = nil) {
            self.linkID = linkID
            self.expiresAt = expiresAt
            self.tokenHash = tokenHash
        }
    }
}
