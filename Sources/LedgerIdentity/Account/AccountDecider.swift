import Foundation
import LedgerCrypto

/// Decides which events a command produces from the account's current state, or why it is
/// refused. Pure: the same state, command, time and policies always give the same answer.
public func decide(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    // Whatever a command does for a signed-in session, it does only while that session lives.
    if let sessionID = command.actingSession, state.exists, state.sessions[sessionID]?.isActive != true {
        throw IdentityError.sessionExpired
    }
    switch command {
    case .register, .startSession, .refreshSession, .revokeSession, .revokeOtherSessions, .recordLoginFailure, .updateProfile,
        .registerByPhone:
        return try decideSessions(state, command, context)
    case .importAccount:
        return try decideImport(state, command, context)
    case .sendVerificationLink, .confirmVerificationLink, .sendPasswordResetLink, .resetPassword, .rehashPassword, .changePassword,
        .addEmailAndPassword, .releaseUnprovenEmail, .confirmEmailAdd, .requestEmailChange, .confirmEmailChange, .revertEmail, .removeEmail:
        return try decideEmail(state, command, context)
    case .linkPhone, .changePhone, .removePhone, .grantReauth, .issueReauthNonce, .recordReauthFailure, .sendReauthLink, .confirmReauthLink:
        return try decidePhoneAndReauth(state, command, context)
    case .registerByProvider, .linkProvider, .mergeProvider, .unlinkProvider, .storeProviderTokens, .handleAppleNotification:
        return try decideProvider(state, command, context)
    case .startTOTPEnrolment, .confirmTOTP, .disableTOTP, .regenerateRecoveryCodes, .completeMFAChallenge, .grantReauthByTOTP,
        .recordMFADailyLimit:
        return try decideTwoFactor(state, command, context)
    case .disableAccount, .enableAccount, .completeRequestedDeletion, .deleteAccount, .placeHold, .releaseHold, .lapseHolds:
        return try decideRemoval(state, command, context)
    case .registerPasskey, .renamePasskey, .removePasskey, .signInWithPasskey, .grantReauthByPasskey, .recordPasskeySuspect:
        return try decidePasskeys(state, command, context)
    case .support:
        return try decideSupport(state, command, context)
    case .signInByLink:
        return try decideLinkSignIn(state, command, context)
    case .setAvatar, .removeAvatar:
        return try decideAvatar(state, command, context)
    }
}

/// A deletion refused because backends still hold the account (`409 deletion_blocked`).
public struct DeletionBlocked: Error, Sendable, Equatable {
    public let blockers: [DeletionBlocker]
}

func providerLinked(_ identity: AccountCommand.ProviderIdentityClaim, sessionID: UUID? = nil) -> AccountEvent {
    .providerLinked(
        .init(
            provider: identity.provider, subject: identity.subject, email: identity.email, emailVerified: identity.emailVerified,
            sessionID: sessionID))
}

func storedToken(_ token: AccountState.ProviderToken, parkedRevocation: UUID?) -> AccountEvent {
    .providerTokensStored(
        .init(
            provider: token.provider, subject: token.subject, clientID: token.clientID, refreshToken: token.refreshToken,
            parkedRevocationID: parkedRevocation))
}

/// Removes the sign-in methods (phone, providers with their tokens, passkeys) whose origin `isRemoved`
/// picks, each with its own event saying why, and TOTP when `removingTOTP`: a revert's span, or
/// everything but the address a reset just proved.
func removeMethods(
    _ state: AccountState, reason: MethodRemovalReason, removingTOTP: Bool, where isRemoved: (AccountState.MethodOrigin?) -> Bool
) -> [AccountEvent] {
    var events: [AccountEvent] = []
    if let phone = state.phone, isRemoved(state.methodOrigins[SignInMethod.phone.rawValue]) {
        events.append(.phoneRemoved(.init(phone: phone, reason: reason)))
    }
    var providers: [IdentityProvider] = []
    for provider in IdentityProvider.allCases {
        guard let subject = state.providerSubjects[provider], isRemoved(state.methodOrigins[provider.rawValue]) else { continue }
        events.append(.providerUnlinked(.init(provider: provider, subject: subject, reason: reason)))
        providers.append(provider)
    }
    events += revokeProviderTokens(state, of: providers, reason: reason.rawValue)
    for passkey in state.passkeysByAge where isRemoved(passkey.origin) {
        events.append(.passkeyRemoved(.init(passkeyID: passkey.id, reason: reason)))
    }
    if removingTOTP, let totp = state.totp {
        events.append(.totpDisabled(.init(reason: reason.rawValue, pending: totp.enabled ? nil : true)))
    }
    return events
}

/// Whether `events` turned off two-step verification that was on (not only a pending enrolment).
public func twoFactorTurnedOff(_ events: [AccountEvent]) -> Bool {
    events.contains { if case .totpDisabled(let disabled) = $0 { disabled.turnedOff } else { false } }
}

/// The methods `events` remove, as the API names them (`phone`, `apple`, `google`,
/// `passkey` once however many passkeys went).
public func removedMethods(_ events: [AccountEvent]) -> [String] {
    var methods: [String] = []
    for event in events {
        let method: String
        switch event {
        case .phoneRemoved: method = SignInMethod.phone.rawValue
        case .providerUnlinked(let unlinked): method = unlinked.provider.rawValue
        case .passkeyRemoved: method = SignInMethod.passkey.rawValue
        default: continue
        }
        if !methods.contains(method) { methods.append(method) }
    }
    return methods
}

/// A deletion: the purge and the cooldown scheduled, every session, link and grant ended, and
/// the providers' tokens revoked.
func scheduleDeletion(
    _ state: AccountState, purgeDelay: TimeInterval, cooldown: TimeInterval, cooldownKeys: [String], now: Date
) -> [AccountEvent] {
    [
        .deletionScheduled(
            .init(
                purgeAfter: now.addingTimeInterval(purgeDelay), cooldownUntil: now.addingTimeInterval(cooldown), cooldownKeys: cooldownKeys)
        )
    ]
        + revokeSessions(state, reason: "account_deleted", except: nil)
        + endPendingAccess(state, reason: .accountDeleted, except: nil, now: now)
        + revokeProviderTokens(state, of: IdentityProvider.allCases, reason: "account_deleted")
}

/// The stored refresh tokens of `providers` given up; the repository queues each one's
/// revocation at the provider in the same transaction.
func revokeProviderTokens(_ state: AccountState, of providers: [IdentityProvider], reason: String) -> [AccountEvent] {
    providers.filter { state.providerTokens[$0] != nil }.map { .providerTokenRevoked(.init(provider: $0, reason: reason)) }
}

/// A sign-in from a device the account has not seen (by its `device_token` alone: labels are
/// the client's to say) tells its verified address; the account's first session (its sign-up)
/// does not.
func newDeviceAlert(_ state: AccountState, _ session: AccountCommand.NewSession) -> [AccountEvent] {
    let device = session.device ?? DeviceLabel.unknown
    guard let email = state.email, state.emailVerified, !state.sessions.isEmpty,
        !state.knownDevices.contains(session.deviceID ?? session.sessionID)
    else { return [] }
    return [.newDeviceAlerted(.init(sessionID: session.sessionID, device: device, email: email))]
}

/// Revocations of every active session but `kept`, oldest first.
func revokeSessions(_ state: AccountState, reason: String, except kept: UUID?) -> [AccountEvent] {
    state.sessions.values.filter { $0.isActive && $0.id != kept }.sorted { $0.createdAt < $1.createdAt }
        .map { .sessionRevoked(.init(sessionID: $0.id, reason: reason)) }
}

func reauthGranted(
    _ grant: AccountCommand.NewGrant, sessionID: UUID, linkID: UUID?, nonceID: UUID?, passkeyID: UUID? = nil, now: Date
) -> AccountEvent {
    .reauthGranted(
        .init(
            grantID: grant.grantID, sessionID: sessionID, method: grant.method.rawValue, tokenHash: grant.tokenHash,
            expiresAt: now.addingTimeInterval(grant.lifetime), linkID: linkID, nonceID: nonceID, passkeyID: passkeyID))
}

/// Recovery (and deletion) wins: every pending email link but the one being used, and every
/// live re-auth grant, ends with it, so whoever holds a copy (an attacker's email-change link,
/// a grant earned on a stolen session) holds nothing (docs/architecture.md "Re-auth"). Revert
/// links end only as `AccessEndReason.endsRevertLinks` says.
func endPendingAccess(_ state: AccountState, reason: AccessEndReason, except usedLink: UUID?, now: Date) -> [AccountEvent] {
    let links = state.pendingLinks.values
        .filter { $0.id != usedLink && (reason.endsRevertLinks || $0.purpose != .emailRevert) }
        .map(\.id).sorted { $0.uuidString < $1.uuidString }
    let grants = state.reauthGrants.values.filter { now < $0.expiresAt }.map(\.id).sorted { $0.uuidString < $1.uuidString }
    var events: [AccountEvent] = []
    if !links.isEmpty { events.append(.emailLinksRevoked(.init(linkIDs: links, reason: reason.rawValue))) }
    if !grants.isEmpty { events.append(.reauthGrantsRevoked(.init(grantIDs: grants, reason: reason.rawValue))) }
    return events
}

func checkLinkRate(
    _ state: AccountState, _ purpose: AccountState.PendingLink.Purpose, _ policy: LinkResendPolicy, now: Date
) throws {
    if let retryAfter = policy.retryAfter(state.linkSendTimes[purpose] ?? [], now: now) {
        throw IdentityError(.rateLimited, "Too many emails sent. Try again later.", retryAfter: retryAfter)
    }
}

func requireAccount(_ state: AccountState) throws {
    guard state.exists, !state.isDeleted else { throw IdentityError(.noAccount, "No account found.") }
}

/// For links: a deleted account's links are expired, whatever their time says.
func requireLiveAccount(_ state: AccountState) throws {
    guard state.exists, !state.isDeleted else { throw IdentityError.linkExpired }
}

func sessionStarted(_ session: AccountCommand.NewSession) -> AccountEvent {
    .sessionStarted(
        .init(
            sessionID: session.sessionID, method: session.method, device: session.device,
            accessTokenHash: session.tokens.accessTokenHash, refreshTokenHash: session.tokens.refreshTokenHash,
            accessExpiresAt: session.tokens.accessExpiresAt, refreshExpiresAt: session.tokens.refreshExpiresAt,
            deviceID: session.deviceID ?? session.sessionID, locale: session.locale, secondFactor: session.secondFactor))
}
