import Foundation

/// The account events as a list: each type's stored name, the payload type that reads it, and
/// the commands whose decision appends it. `ledger events catalog` renders docs/events.md from
/// this; the switches are exhaustive, so a new event cannot be left out.
extension AccountEvent {
    /// Every account event type, by its stored name.
    public enum Kind: String, CaseIterable, Sendable {
        case registered = "account.registered"
        case passwordSet = "password.set"
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
    }

    public var kind: Kind {
        switch self {
        case .registered: return .registered
        case .passwordSet: return .passwordSet
        case .emailVerificationSent: return .emailVerificationSent
        case .emailVerified: return .emailVerified
        case .passwordResetRequested: return .passwordResetRequested
        case .sessionStarted: return .sessionStarted
        case .sessionRefreshed: return .sessionRefreshed
        case .sessionRevoked: return .sessionRevoked
        case .loginFailed: return .loginFailed
        case .loginThrottled: return .loginThrottled
        case .handleClaimed: return .handleClaimed
        case .profileUpdated: return .profileUpdated
        case .phoneLinked: return .phoneLinked
        case .phoneChanged: return .phoneChanged
        case .reauthGranted: return .reauthGranted
        case .reauthFailed: return .reauthFailed
        case .reauthLinkSent: return .reauthLinkSent
        case .reauthNonceIssued: return .reauthNonceIssued
        case .reauthGrantsRevoked: return .reauthGrantsRevoked
        case .emailLinksRevoked: return .emailLinksRevoked
        case .emailAdded: return .emailAdded
        case .emailAddRequested: return .emailAddRequested
        case .emailChangeRequested: return .emailChangeRequested
        case .emailChanged: return .emailChanged
        case .emailReverted: return .emailReverted
        case .providerLinked: return .providerLinked
        case .providerUnlinked: return .providerUnlinked
        case .phoneRemoved: return .phoneRemoved
        case .accountDisabled: return .accountDisabled
        case .accountEnabled: return .accountEnabled
        case .appleNotificationReceived: return .appleNotificationReceived
        case .deletionRequested: return .deletionRequested
        case .emailRemoved: return .emailRemoved
        case .providerTokensStored: return .providerTokensStored
        case .providerTokenRevoked: return .providerTokenRevoked
        case .totpEnrolmentStarted: return .totpEnrolmentStarted
        case .totpEnabled: return .totpEnabled
        case .totpDisabled: return .totpDisabled
        case .recoveryCodesRegenerated: return .recoveryCodesRegenerated
        case .totpCodeUsed: return .totpCodeUsed
        case .recoveryCodeUsed: return .recoveryCodeUsed
        case .mfaChallengeIssued: return .mfaChallengeIssued
        case .mfaChallengeFailed: return .mfaChallengeFailed
        case .mfaChallengeEnded: return .mfaChallengeEnded
        case .newDeviceAlerted: return .newDeviceAlerted
        case .mfaDailyLimitReached: return .mfaDailyLimitReached
        case .passkeyRegistered: return .passkeyRegistered
        case .passkeyRenamed: return .passkeyRenamed
        case .passkeyUsed: return .passkeyUsed
        case .passkeyRemoved: return .passkeyRemoved
        case .passkeySuspect: return .passkeySuspect
        case .holdPlaced: return .holdPlaced
        case .holdReleased: return .holdReleased
        case .holdLapsed: return .holdLapsed
        case .deletionScheduled: return .deletionScheduled
        case .purged: return .purged
        }
    }
}

extension AccountEvent.Kind {
    /// The type its payload decodes as.
    public var payloadType: any Decodable.Type {
        switch self {
        case .registered: return AccountEvent.Registered.self
        case .passwordSet: return AccountEvent.PasswordSet.self
        case .emailVerificationSent: return AccountEvent.EmailLinkSent.self
        case .emailVerified: return AccountEvent.EmailVerified.self
        case .passwordResetRequested: return AccountEvent.EmailLinkSent.self
        case .sessionStarted: return AccountEvent.SessionStarted.self
        case .sessionRefreshed: return AccountEvent.SessionRefreshed.self
        case .sessionRevoked: return AccountEvent.SessionRevoked.self
        case .loginFailed: return AccountEvent.LoginFailed.self
        case .loginThrottled: return AccountEvent.LoginThrottled.self
        case .handleClaimed: return AccountEvent.HandleClaimed.self
        case .profileUpdated: return AccountEvent.ProfileUpdated.self
        case .phoneLinked: return AccountEvent.PhoneLinked.self
        case .phoneChanged: return AccountEvent.PhoneChanged.self
        case .reauthGranted: return AccountEvent.ReauthGranted.self
        case .reauthFailed: return AccountEvent.ReauthFailed.self
        case .reauthLinkSent: return AccountEvent.EmailLinkSent.self
        case .reauthNonceIssued: return AccountEvent.ReauthNonceIssued.self
        case .reauthGrantsRevoked: return AccountEvent.ReauthGrantsRevoked.self
        case .emailLinksRevoked: return AccountEvent.EmailLinksRevoked.self
        case .emailAdded: return AccountEvent.EmailAdded.self
        case .emailAddRequested: return AccountEvent.EmailAddRequested.self
        case .emailChangeRequested: return AccountEvent.EmailLinkSent.self
        case .emailChanged: return AccountEvent.EmailChanged.self
        case .emailReverted: return AccountEvent.EmailReverted.self
        case .providerLinked: return AccountEvent.ProviderLinked.self
        case .providerUnlinked: return AccountEvent.ProviderUnlinked.self
        case .phoneRemoved: return AccountEvent.PhoneRemoved.self
        case .accountDisabled: return AccountEvent.AccountDisabled.self
        case .accountEnabled: return AccountEvent.AccountEnabled.self
        case .appleNotificationReceived: return AccountEvent.AppleNotificationReceived.self
        case .deletionRequested: return AccountEvent.DeletionRequested.self
        case .emailRemoved: return AccountEvent.EmailRemoved.self
        case .providerTokensStored: return AccountEvent.ProviderTokensStored.self
        case .providerTokenRevoked: return AccountEvent.ProviderTokenRevoked.self
        case .totpEnrolmentStarted: return AccountEvent.TOTPEnrolmentStarted.self
        case .totpEnabled: return AccountEvent.TOTPEnabled.self
        case .totpDisabled: return AccountEvent.TOTPDisabled.self
        case .recoveryCodesRegenerated: return AccountEvent.RecoveryCodesRegenerated.self
        case .totpCodeUsed: return AccountEvent.TOTPCodeUsed.self
        case .recoveryCodeUsed: return AccountEvent.RecoveryCodeUsed.self
        case .mfaChallengeIssued: return AccountEvent.MFAChallengeIssued.self
        case .mfaChallengeFailed: return AccountEvent.MFAChallengeFailed.self
        case .mfaChallengeEnded: return AccountEvent.MFAChallengeEnded.self
        case .newDeviceAlerted: return AccountEvent.NewDeviceAlerted.self
        case .mfaDailyLimitReached: return AccountEvent.MFADailyLimitReached.self
        case .passkeyRegistered: return AccountEvent.PasskeyRegistered.self
        case .passkeyRenamed: return AccountEvent.PasskeyRenamed.self
        case .passkeyUsed: return AccountEvent.PasskeyUsed.self
        case .passkeyRemoved: return AccountEvent.PasskeyRemoved.self
        case .passkeySuspect: return AccountEvent.PasskeySuspect.self
        case .holdPlaced: return Hold.self
        case .holdReleased: return AccountEvent.HoldReleased.self
        case .holdLapsed: return AccountEvent.HoldLapsed.self
        case .deletionScheduled: return AccountEvent.DeletionScheduled.self
        case .purged: return AccountEvent.Purged.self
        }
    }

    /// The `AccountCommand`s whose decision (`decide`) can append it.
    public var emittedBy: [String] {
        switch self {
        case .registered: return ["register", "registerByPhone", "registerByProvider"]
        case .passwordSet:
            return [
                "register", "resetPassword", "rehashPassword", "changePassword", "addEmailAndPassword", "confirmEmailAdd", "revertEmail",
            ]
        case .emailVerificationSent: return ["register", "sendVerificationLink"]
        case .emailVerified: return ["confirmVerificationLink", "confirmReauthLink", "registerByProvider", "resetPassword"]
        case .passwordResetRequested: return ["sendPasswordResetLink"]
        case .sessionStarted:
            return ["register", "startSession", "registerByPhone", "registerByProvider", "completeMFAChallenge", "signInWithPasskey"]
        case .sessionRefreshed: return ["refreshSession"]
        case .sessionRevoked:
            return [
                "refreshSession", "revokeSession", "revokeOtherSessions", "resetPassword", "changePassword", "revertEmail",
                "disableAccount",
                "handleAppleNotification", "deleteAccount",
            ]
        case .loginFailed: return ["recordLoginFailure"]
        case .loginThrottled: return ["recordLoginFailure"]
        case .handleClaimed: return ["register", "updateProfile", "registerByPhone", "registerByProvider"]
        case .profileUpdated: return ["updateProfile"]
        case .phoneLinked: return ["registerByPhone", "linkPhone"]
        case .phoneChanged: return ["changePhone"]
        case .reauthGranted: return ["grantReauth", "confirmReauthLink", "grantReauthByTOTP", "grantReauthByPasskey"]
        case .reauthFailed: return ["recordReauthFailure"]
        case .reauthLinkSent: return ["sendReauthLink"]
        case .reauthNonceIssued: return ["issueReauthNonce"]
        case .reauthGrantsRevoked:
            return [
                "resetPassword", "changePassword", "revertEmail", "disableAccount", "handleAppleNotification", "completeRequestedDeletion",
                "deleteAccount",
            ]
        case .emailLinksRevoked:
            return [
                "resetPassword", "changePassword", "revertEmail", "removeEmail", "disableAccount", "handleAppleNotification",
                "completeRequestedDeletion", "deleteAccount", "requestEmailChange", "releaseUnprovenEmail",
            ]
        case .emailAdded: return ["confirmEmailAdd", "linkProvider"]
        case .emailAddRequested: return ["addEmailAndPassword"]
        case .emailChangeRequested: return ["requestEmailChange"]
        case .emailChanged: return ["confirmEmailChange"]
        case .emailReverted: return ["revertEmail"]
        case .providerLinked: return ["linkProvider", "mergeProvider", "registerByProvider"]
        case .providerUnlinked: return ["unlinkProvider", "handleAppleNotification", "revertEmail", "resetPassword"]
        case .phoneRemoved: return ["removePhone", "revertEmail", "resetPassword"]
        case .accountDisabled: return ["disableAccount", "handleAppleNotification"]
        case .accountEnabled: return ["enableAccount"]
        case .appleNotificationReceived: return ["handleAppleNotification"]
        case .deletionRequested: return ["handleAppleNotification"]
        case .emailRemoved: return ["removeEmail", "releaseUnprovenEmail"]
        case .providerTokensStored: return ["storeProviderTokens", "completeMFAChallenge"]
        case .providerTokenRevoked:
            return [
                "unlinkProvider", "handleAppleNotification", "completeRequestedDeletion", "deleteAccount", "revertEmail", "resetPassword",
            ]
        case .totpEnrolmentStarted: return ["startTOTPEnrolment"]
        case .totpEnabled: return ["confirmTOTP"]
        case .totpDisabled: return ["disableTOTP", "revertEmail", "resetPassword"]
        case .recoveryCodesRegenerated: return ["regenerateRecoveryCodes"]
        case .totpCodeUsed: return ["confirmTOTP", "completeMFAChallenge", "grantReauthByTOTP"]
        case .recoveryCodeUsed: return ["completeMFAChallenge"]
        case .mfaChallengeIssued: return ["startSession"]
        case .mfaChallengeFailed: return ["completeMFAChallenge"]
        case .mfaChallengeEnded: return ["completeMFAChallenge"]
        case .newDeviceAlerted: return ["startSession", "completeMFAChallenge", "signInWithPasskey"]
        case .mfaDailyLimitReached: return ["recordMFADailyLimit"]
        case .passkeyRegistered: return ["registerPasskey"]
        case .passkeyRenamed: return ["renamePasskey"]
        case .passkeyUsed: return ["signInWithPasskey", "grantReauthByPasskey"]
        case .passkeyRemoved: return ["removePasskey", "revertEmail", "resetPassword"]
        case .passkeySuspect: return ["signInWithPasskey", "grantReauthByPasskey", "recordPasskeySuspect"]
        case .holdPlaced: return ["placeHold"]
        case .holdReleased: return ["releaseHold"]
        case .holdLapsed: return ["lapseHolds"]
        case .deletionScheduled: return ["deleteAccount", "handleAppleNotification", "completeRequestedDeletion"]
        case .purged: return []  // appended by the purge worker, not by a command
        }
    }
}
