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

/// Applies one event: the only way state changes.
public func evolve(_ state: AccountState, _ event: AccountEvent, at recordedAt: Date) -> AccountState {
    var next = state
    evolve(&next, event, at: recordedAt)
    return next
}

extension AccountState {
    /// A link of `purpose` went out at `time`. What can no longer matter goes first: links past
    /// their expiry, and send times older than any send window may be or beyond the most any
    /// limit reads (`LinkResendPolicy.longestWindow`, `.largestLimit`: the fold reads no
    /// configuration), so strangers asking for resets of someone's address cannot grow that
    /// account's state (or its snapshot) without bound.
    mutating func linkSent(_ purpose: PendingLink.Purpose, at time: Date) {
        pendingLinks = pendingLinks.filter { $0.value.expiresAt > time }
        if let pending = pendingEmail, pendingLinks[pending.linkID] == nil { pendingEmail = nil }
        for (sentPurpose, times) in linkSendTimes {
            linkSendTimes[sentPurpose] = Array(
                times.filter { $0 > time.addingTimeInterval(-LinkResendPolicy.longestWindow) }.suffix(LinkResendPolicy.largestLimit))
        }
        linkSendTimes[purpose, default: []].append(time)
    }
}

/// `evolve` in place, for folds over long streams: the state's collections (sessions, holds,
/// links) are mutated where they are instead of copied once per event.
public func evolve(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    state.version += 1
    switch event {
    case .registered(let registered):
        state.createdAt = recordedAt
        state.email = registered.email
        state.displayName = registered.displayName
    case .passwordSet(let set):
        state.passwordHash = set.passwordHash
        if set.reason.changesThePassword { state.passwordChangedAt = recordedAt }
    case .emailVerificationSent(let sent):
        state.pendingLinks[sent.linkID] = .init(id: sent.linkID, purpose: .verifyEmail, email: sent.email, expiresAt: sent.expiresAt)
        state.linkSent(.verifyEmail, at: recordedAt)
    case .passwordResetRequested(let sent):
        state.pendingLinks[sent.linkID] = .init(id: sent.linkID, purpose: .passwordReset, email: sent.email, expiresAt: sent.expiresAt)
        state.linkSent(.passwordReset, at: recordedAt)
    case .emailVerified(let verified):
        if EmailAddress.normalize(verified.email) == state.email.map(EmailAddress.normalize) { state.emailVerified = true }
        state.pendingLinks = state.pendingLinks.filter { $0.value.purpose != .verifyEmail }
    case .sessionStarted(let started):
        if let locale = started.locale { state.locale = locale }
        if let deviceID = started.deviceID {
            state.knownDevices.removeAll { $0 == deviceID }
            state.knownDevices = Array((state.knownDevices + [deviceID]).suffix(maximumKnownDevices))
        }
        state.sessions[started.sessionID] = .init(
            id: started.sessionID, method: started.method, device: started.device, createdAt: recordedAt,
            lastUsedAt: recordedAt, accessTokenHash: started.accessTokenHash, refreshTokenHash: started.refreshTokenHash,
            accessExpiresAt: started.accessExpiresAt, refreshExpiresAt: started.refreshExpiresAt, deviceID: started.deviceID)
    case .sessionRefreshed(let refreshed):
        guard var session = state.sessions[refreshed.sessionID] else { break }
        session.accessTokenHash = refreshed.accessTokenHash
        session.refreshTokenHash = refreshed.refreshTokenHash
        session.accessExpiresAt = refreshed.accessExpiresAt
        session.refreshExpiresAt = refreshed.refreshExpiresAt
        session.lastUsedAt = recordedAt
        state.sessions[refreshed.sessionID] = session
    case .sessionRevoked(let revoked):
        guard var session = state.sessions[revoked.sessionID], session.revokedAt == nil else { break }
        session.revokedAt = recordedAt
        session.revokedReason = revoked.reason
        state.sessions[revoked.sessionID] = session
    case .loginFailed, .loginThrottled:
        break
    case .handleClaimed(let claimed):
        state.handle = claimed.handle
        state.handleIsTemporary = claimed.temporary
    case .profileUpdated(let updated):
        state.displayName = updated.displayName
    case .phoneLinked(let linked):
        state.phone = linked.phone
        state.phoneRegion = linked.region
        state.methodOrigins[SignInMethod.phone.rawValue] = .init(version: state.version, sessionID: linked.sessionID, at: recordedAt)
    case .phoneChanged(let changed):
        state.phone = changed.phone
        state.phoneRegion = changed.region
        state.methodOrigins[SignInMethod.phone.rawValue] = .init(version: state.version, sessionID: changed.sessionID, at: recordedAt)
    case .reauthGranted(let granted):
        // Grants that ended before this one began can no longer matter.
        state.reauthGrants = state.reauthGrants.filter { $0.value.expiresAt > recordedAt }
        state.reauthGrants[granted.grantID] = .init(
            id: granted.grantID, sessionID: granted.sessionID, method: granted.method, tokenHash: granted.tokenHash,
            expiresAt: granted.expiresAt, passkeyID: granted.passkeyID)
        if let linkID = granted.linkID { state.pendingLinks[linkID] = nil }
        if let nonceID = granted.nonceID { state.reauthNonces[nonceID] = nil }
    case .reauthNonceIssued(let issued):
        state.reauthNonces = state.reauthNonces.filter { $0.value.expiresAt > recordedAt }
        state.reauthNonces[issued.nonceID] = .init(
            id: issued.nonceID, sessionID: issued.sessionID, nonceHash: issued.nonceHash, expiresAt: issued.expiresAt)
    case .reauthGrantsRevoked(let revoked):
        for grantID in revoked.grantIDs { state.reauthGrants[grantID] = nil }
        state.reauthNonces = [:]
    case .emailLinksRevoked(let revoked):
        for linkID in revoked.linkIDs { state.pendingLinks[linkID] = nil }
        if let pending = state.pendingEmail, revoked.linkIDs.contains(pending.linkID) { state.pendingEmail = nil }
    case .reauthLinkSent(let sent):
        state.pendingLinks[sent.linkID] = .init(
            id: sent.linkID, purpose: .reauth, email: sent.email, expiresAt: sent.expiresAt, sessionID: sent.sessionID)
        state.linkSent(.reauth, at: recordedAt)
    case .reauthFailed:
        break
    case .emailAdded(let added):
        state.email = added.email
        state.emailVerified = added.verifiedBy != nil
        state.pendingEmail = nil
        if let linkID = added.linkID { state.pendingLinks[linkID] = nil }
    case .emailAddRequested(let requested):
        state.pendingLinks = state.pendingLinks.filter { $0.value.purpose != .emailAdd }
        state.pendingLinks[requested.linkID] = .init(
            id: requested.linkID, purpose: .emailAdd, email: requested.email, expiresAt: requested.expiresAt,
            sessionID: requested.sessionID)
        state.pendingEmail = .init(
            email: requested.email, linkID: requested.linkID, passwordHash: requested.passwordHash, sessionID: requested.sessionID)
        state.linkSent(.emailAdd, at: recordedAt)
    case .emailChangeRequested(let sent):
        state.pendingLinks[sent.linkID] = .init(
            id: sent.linkID, purpose: .emailChange, email: sent.email, expiresAt: sent.expiresAt, sessionID: sent.sessionID)
        state.linkSent(.emailChange, at: recordedAt)
    case .emailChanged(let changed):
        let undone = AccountState.RevertibleChange(
            version: state.version, sessionID: changed.sessionID, hadPassword: state.hasPassword, at: recordedAt)
        state.email = changed.email
        state.emailVerified = true
        if state.pendingEmail?.linkID == changed.linkID { state.pendingEmail = nil }
        state.pendingLinks[changed.linkID] = nil
        // Older change and verification links are for addresses that no longer apply.
        state.pendingLinks = state.pendingLinks.filter { $0.value.purpose != .emailChange && $0.value.purpose != .verifyEmail }
        // A revert link goes only to an address the account had proven: one never verified may
        // be a stranger's (a mistyped address), who must not be handed the account.
        if let previous = changed.previousEmail, changed.previousEmailVerified {
            state.pendingLinks[changed.revertLinkID] = .init(
                id: changed.revertLinkID, purpose: .emailRevert, email: previous, expiresAt: changed.revertExpiresAt, undoes: undone)
        }
    case .purged(let purged):
        state.purgedAt = recordedAt
        state.deletedAt = state.deletedAt ?? purged.deletedAt ?? recordedAt
    case .deletionScheduled(let scheduled):
        state.deletedAt = recordedAt
        state.purgeAfter = scheduled.purgeAfter
    case .holdPlaced(let hold):
        state.holds[hold.ref] = hold
    case .holdReleased(let released):
        state.holds[released.ref] = nil
    case .holdLapsed(let lapsed):
        state.holds[lapsed.ref] = nil
    case .providerLinked(let linked):
        state.providerSubjects[linked.provider] = linked.subject
        state.methodOrigins[linked.provider.rawValue] = .init(version: state.version, sessionID: linked.sessionID, at: recordedAt)
    case .providerUnlinked(let unlinked):
        state.providerSubjects[unlinked.provider] = nil
        state.methodOrigins[unlinked.provider.rawValue] = nil
    case .providerTokensStored(let stored):
        state.providerTokens[stored.provider] = .init(
            provider: stored.provider, subject: stored.subject, clientID: stored.clientID, refreshToken: stored.refreshToken)
    case .providerTokenRevoked(let revoked):
        state.providerTokens[revoked.provider] = nil
    case .totpEnrolmentStarted(let started):
        state.totp = .init(secret: started.secret, enabled: false, lastUsedStep: nil, enrolledBy: started.sessionID)
    case .totpEnabled(let enabled):
        // Events from before the confirming session was recorded: only the enrolling session confirms.
        let origin = AccountState.MethodOrigin(
            version: state.version, sessionID: enabled.sessionID ?? state.totp?.enrolledBy, at: recordedAt)
        state.totp?.enabled = true
        state.totp?.enabledOrigin = origin
        state.totp?.recoveryCodesOrigin = origin
        state.recoveryCodeHashes = enabled.recoveryCodeHashes
    case .totpDisabled:
        state.totp = nil
        state.recoveryCodeHashes = []
        state.mfaChallenges = [:]
    case .recoveryCodesRegenerated(let regenerated):
        state.recoveryCodeHashes = regenerated.recoveryCodeHashes
        state.totp?.recoveryCodesOrigin = .init(version: state.version, sessionID: regenerated.sessionID, at: recordedAt)
    case .totpCodeUsed(let used):
        let last = state.totp?.lastUsedStep ?? used.step
        state.totp?.lastUsedStep = max(last, used.step)
    case .recoveryCodeUsed(let used):
        state.recoveryCodeHashes.removeAll { $0 == used.codeHash }
    case .mfaChallengeIssued(let issued):
        // Challenges past their time are dropped as new ones come: the state stays small.
        state.mfaChallenges = state.mfaChallenges.filter { $0.value.expiresAt > recordedAt }
        if state.mfaChallenges.count >= maximumOpenChallenges,
            let oldest = state.mfaChallenges.values.min(by: { $0.expiresAt < $1.expiresAt })
        {
            state.mfaChallenges[oldest.id] = nil
        }
        state.mfaChallenges[issued.challengeID] = .init(
            id: issued.challengeID, tokenHash: issued.tokenHash, method: issued.method, device: issued.device,
            expiresAt: issued.expiresAt, failures: 0, linkToken: issued.linkToken, deviceID: issued.deviceID,
            providerToken: issued.providerToken, parkedRevocationID: issued.parkedRevocationID)
    case .mfaChallengeFailed(let failed):
        state.mfaChallenges[failed.challengeID]?.failures = failed.failures
    case .mfaChallengeEnded(let ended):
        state.mfaChallenges[ended.challengeID] = nil
    case .newDeviceAlerted, .mfaDailyLimitReached:
        break
    case .accountDisabled(let disabled):
        state.disabledAt = recordedAt
        state.disabledReason = disabled.reason
    case .accountEnabled:
        state.disabledAt = nil
        state.disabledReason = nil
    case .deletionRequested:
        state.deletionRequestedAt = recordedAt
    case .appleNotificationReceived(let received):
        state.appleNotificationIDs = Array((state.appleNotificationIDs + [received.notificationID]).suffix(appleNotificationMemory))
    case .phoneRemoved:
        state.phone = nil
        state.phoneRegion = nil
        state.methodOrigins[SignInMethod.phone.rawValue] = nil
    case .emailRemoved(let removed):
        let undone = AccountState.RevertibleChange(
            version: state.version, sessionID: removed.sessionID, hadPassword: state.hasPassword, at: recordedAt)
        state.email = nil
        state.emailVerified = false
        if removed.passwordRemoved { state.passwordHash = nil }
        if let linkID = removed.revertLinkID, let expiresAt = removed.revertExpiresAt {
            state.pendingLinks[linkID] = .init(
                id: linkID, purpose: .emailRevert, email: removed.email, expiresAt: expiresAt, undoes: undone)
        }
    case .passkeyRegistered, .passkeyRenamed, .passkeyUsed, .passkeyRemoved:
        state.applyPasskey(event, at: recordedAt)
    case .passkeySuspect:
        break
    case .emailReverted(let reverted):
        state.codesEndedAt = recordedAt
        state.email = reverted.email
        state.emailVerified = true
        // The used revert link and every later one (back to addresses after this one) end;
        // earlier ones stay, so reverting the second of two changes (the attacker's own
        // mailbox gets that link) cannot end the original owner's way back. Which are later is
        // named in the event (by the changes' order); events written before it said so went by
        // expiry.
        let used = state.pendingLinks[reverted.linkID]?.expiresAt ?? .distantFuture
        let ended = reverted.endedRevertLinkIDs.map(Set.init)
        state.pendingLinks = state.pendingLinks.filter { id, link in
            switch link.purpose {
            case .emailChange, .verifyEmail, .emailAdd: return false
            case .emailRevert: return id != reverted.linkID && (ended.map { !$0.contains(id) } ?? (link.expiresAt < used))
            default: return true
            }
        }
        state.pendingEmail = nil
    }
    if case .passwordSet(let set) = event, set.reason.endsResetLinks {
        state.pendingLinks = state.pendingLinks.filter { $0.value.purpose != .passwordReset }
    }
    // A new password or a reverted email ends the sign-ins waiting for their second factor, and
    // a reset or a revert forgets the known devices (`PasswordSetReason` says which does what).
    switch event {
    case .passwordSet(let set) where set.reason.endsSecondFactorChallenges: state.mfaChallenges = [:]
    case .emailReverted: state.mfaChallenges = [:]
    default: break
    }
    switch event {
    case .passwordSet(let set) where set.reason.forgetsKnownDevices: state.knownDevices = []
    case .emailReverted: state.knownDevices = []
    default: break
    }
    state.passkeyOnlySince = state.vouchedForByPasskeysOnly ? state.passkeyOnlySince ?? recordedAt : nil
}

/// Devices an account remembers for the new sign-in alert: enough for a person's phones,
/// tablets and browsers; a device unseen for that many others is told about again.
public let maximumKnownDevices = 32

/// Sign-ins waiting for their second factor an account holds at once; the oldest goes first.
public let maximumOpenChallenges = 20

/// How many Apple notification ids an account remembers: Apple repeats a notification soon if at
/// all, and the state must not grow with every one.
public let appleNotificationMemory = 32
