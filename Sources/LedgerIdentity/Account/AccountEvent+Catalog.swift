import Foundation

/// The account events as one registry: each type's stored name (`Kind`), and, in its area's
/// list (`sessionsRegistrations` in Sessions/, and so on), the payload type that reads it and
/// the commands whose decision appends it. Decoding and `ledger events catalog` (which renders
/// docs/events.md) both read the registry; the one switch over the cases (`parts`) is
/// exhaustive, and `EventCatalogTests` checks that every kind is registered exactly once.
extension AccountEvent {
    /// Every account event type, by its stored name.
    public enum Kind: String, CaseIterable, Sendable {
        case registered = "account.registered"
        case imported = "account.imported"
        case passwordSet = "password.set"
        case passwordRehashed = "password.rehashed"
        case emailVerificationSent = "email.verification_sent"
        case emailVerified = "email.verified"
        case passwordResetRequested = "password.reset_requested"
        case sessionStarted = "session.started"
        case sessionRefreshed = "session.refreshed"
        case sessionRevoked = "session.revoked"
        case loginFailed = "login.failed"
        case loginThrottled = "login.throttled"
        case handleClaimed = "handle.claimed"
        case profileUpdated = "profile.updated"
        case localeChosen = "profile.locale_set"
        case phoneLinked = "phone.linked"
        case phoneChanged = "phone.changed"
        case reauthGranted = "reauth.granted"
        case reauthFailed = "reauth.failed"
        case reauthLinkSent = "reauth.link_sent"
        case reauthNonceIssued = "reauth.nonce_issued"
        case reauthGrantsRevoked = "reauth.grants_revoked"
        case emailLinksRevoked = "email.links_revoked"
        case emailAdded = "email.added"
        case emailAddRequested = "email.add_requested"
        case emailChangeRequested = "email.change_requested"
        case emailChanged = "email.changed"
        case emailReverted = "email.reverted"
        case providerLinked = "provider.linked"
        case providerUnlinked = "provider.unlinked"
        case phoneRemoved = "phone.removed"
        case accountDisabled = "account.disabled"
        case accountEnabled = "account.enabled"
        case appleNotificationReceived = "apple.notification_received"
        case deletionRequested = "account.deletion_requested"
        case emailRemoved = "email.removed"
        case providerTokensStored = "provider.tokens_stored"
        case providerTokenRevoked = "provider.token_revoked"
        case totpEnrolmentStarted = "mfa.totp_enrolment_started"
        case totpEnabled = "mfa.totp_enabled"
        case totpDisabled = "mfa.totp_disabled"
        case recoveryCodesRegenerated = "mfa.recovery_codes_regenerated"
        case totpCodeUsed = "mfa.totp_code_used"
        case recoveryCodeUsed = "mfa.recovery_code_used"
        case mfaChallengeIssued = "mfa.challenge_issued"
        case mfaChallengeFailed = "mfa.challenge_failed"
        case mfaChallengeEnded = "mfa.challenge_ended"
        case newDeviceAlerted = "session.new_device_alerted"
        case mfaDailyLimitReached = "mfa.daily_limit_reached"
        case passkeyRegistered = "passkey.registered"
        case passkeyRenamed = "passkey.renamed"
        case passkeyUsed = "passkey.used"
        case passkeyRemoved = "passkey.removed"
        case passkeySuspect = "passkey.suspect"
        case holdPlaced = "hold.placed"
        case holdReleased = "hold.released"
        case holdLapsed = "hold.lapsed"
        case deletionScheduled = "account.deletion_scheduled"
        case purged = "account.purged"
        case adminViewed = "admin.viewed"
        case adminSignedOut = "admin.signed_out"
        case adminPasswordResetSent = "admin.password_reset_sent"
        case adminTwoFactorReset = "admin.two_factor_reset"
        case adminMethodRemoved = "admin.method_removed"
        case adminDisabled = "admin.disabled"
        case adminEnabled = "admin.enabled"
        case avatarSet = "avatar.set"
        case avatarRemoved = "avatar.removed"
    }

    /// The event's type and its payload: the one switch over the cases.
    var parts: (kind: Kind, payload: any Encodable) {
        switch self {
        case .registered(let payload): return (.registered, payload)
        case .imported(let payload): return (.imported, payload)
        case .passwordSet(let payload): return (.passwordSet, payload)
        case .passwordRehashed(let payload): return (.passwordRehashed, payload)
        case .emailVerificationSent(let payload): return (.emailVerificationSent, payload)
        case .emailVerified(let payload): return (.emailVerified, payload)
        case .passwordResetRequested(let payload): return (.passwordResetRequested, payload)
        case .sessionStarted(let payload): return (.sessionStarted, payload)
        case .sessionRefreshed(let payload): return (.sessionRefreshed, payload)
        case .sessionRevoked(let payload): return (.sessionRevoked, payload)
        case .loginFailed(let payload): return (.loginFailed, payload)
        case .loginThrottled(let payload): return (.loginThrottled, payload)
        case .handleClaimed(let payload): return (.handleClaimed, payload)
        case .profileUpdated(let payload): return (.profileUpdated, payload)
        case .localeChosen(let payload): return (.localeChosen, payload)
        case .phoneLinked(let payload): return (.phoneLinked, payload)
        case .phoneChanged(let payload): return (.phoneChanged, payload)
        case .reauthGranted(let payload): return (.reauthGranted, payload)
        case .reauthFailed(let payload): return (.reauthFailed, payload)
        case .reauthLinkSent(let payload): return (.reauthLinkSent, payload)
        case .reauthNonceIssued(let payload): return (.reauthNonceIssued, payload)
        case .reauthGrantsRevoked(let payload): return (.reauthGrantsRevoked, payload)
        case .emailLinksRevoked(let payload): return (.emailLinksRevoked, payload)
        case .emailAdded(let payload): return (.emailAdded, payload)
        case .emailAddRequested(let payload): return (.emailAddRequested, payload)
        case .emailChangeRequested(let payload): return (.emailChangeRequested, payload)
        case .emailChanged(let payload): return (.emailChanged, payload)
        case .emailReverted(let payload): return (.emailReverted, payload)
        case .providerLinked(let payload): return (.providerLinked, payload)
        case .providerUnlinked(let payload): return (.providerUnlinked, payload)
        case .phoneRemoved(let payload): return (.phoneRemoved, payload)
        case .accountDisabled(let payload): return (.accountDisabled, payload)
        case .accountEnabled(let payload): return (.accountEnabled, payload)
        case .appleNotificationReceived(let payload): return (.appleNotificationReceived, payload)
        case .deletionRequested(let payload): return (.deletionRequested, payload)
        case .emailRemoved(let payload): return (.emailRemoved, payload)
        case .providerTokensStored(let payload): return (.providerTokensStored, payload)
        case .providerTokenRevoked(let payload): return (.providerTokenRevoked, payload)
        case .totpEnrolmentStarted(let payload): return (.totpEnrolmentStarted, payload)
        case .totpEnabled(let payload): return (.totpEnabled, payload)
        case .totpDisabled(let payload): return (.totpDisabled, payload)
        case .recoveryCodesRegenerated(let payload): return (.recoveryCodesRegenerated, payload)
        case .totpCodeUsed(let payload): return (.totpCodeUsed, payload)
        case .recoveryCodeUsed(let payload): return (.recoveryCodeUsed, payload)
        case .mfaChallengeIssued(let payload): return (.mfaChallengeIssued, payload)
        case .mfaChallengeFailed(let payload): return (.mfaChallengeFailed, payload)
        case .mfaChallengeEnded(let payload): return (.mfaChallengeEnded, payload)
        case .newDeviceAlerted(let payload): return (.newDeviceAlerted, payload)
        case .mfaDailyLimitReached(let payload): return (.mfaDailyLimitReached, payload)
        case .passkeyRegistered(let payload): return (.passkeyRegistered, payload)
        case .passkeyRenamed(let payload): return (.passkeyRenamed, payload)
        case .passkeyUsed(let payload): return (.passkeyUsed, payload)
        case .passkeyRemoved(let payload): return (.passkeyRemoved, payload)
        case .passkeySuspect(let payload): return (.passkeySuspect, payload)
        case .holdPlaced(let payload): return (.holdPlaced, payload)
        case .holdReleased(let payload): return (.holdReleased, payload)
        case .holdLapsed(let payload): return (.holdLapsed, payload)
        case .deletionScheduled(let payload): return (.deletionScheduled, payload)
        case .purged(let payload): return (.purged, payload)
        case .admin(let action, let payload): return (action.kind, payload)
        case .avatarSet(let payload): return (.avatarSet, payload)
        case .avatarRemoved(let payload): return (.avatarRemoved, payload)
        }
    }

    /// Its type.
    public var kind: Kind { parts.kind }

    /// One event type as the registry holds it.
    public typealias Registration = EventRegistration<AccountEvent, Kind>

    /// Every area's registrations.
    public static let registrations: [Registration] =
        sessionsRegistrations + importRegistrations + emailRegistrations + phoneAndReauthRegistrations + providersRegistrations
        + twoFactorRegistrations
        + passkeysRegistrations + removalRegistrations + supportRegistrations + avatarRegistrations

    /// The registry, by stored type name.
    static let registry = Registration.registry(registrations)
}

extension AccountEvent.Kind {
    /// Its entry in the registry. Every kind has one (`EventCatalogTests`).
    public var registration: AccountEvent.Registration {
        guard let registration = AccountEvent.registry[rawValue] else { preconditionFailure("\(rawValue) is not registered") }
        return registration
    }

    /// The type its payload decodes as.
    public var payloadType: any Decodable.Type { registration.payloadType }

    /// The `AccountCommand`s whose decision (`decide`) can append it.
    public var emittedBy: [String] { registration.emittedBy }
}
