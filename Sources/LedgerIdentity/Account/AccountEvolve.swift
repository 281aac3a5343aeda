import Foundation

/// Applies one event: the only way state changes.
public func evolve(_ state: AccountState, _ event: AccountEvent, at recordedAt: Date) -> AccountState {
    var next = state
    evolve(&next, event, at: recordedAt)
    return next
}

/// `evolve` in place, for folds over long streams: the state's collections (sessions, holds,
/// links) are mutated where they are instead of copied once per event.
public func evolve(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    state.version += 1
    // Routed by area, as `decide` is: each area's folder holds how its events change the state.
    switch event {
    case .registered, .sessionStarted, .sessionRefreshed, .sessionRevoked, .loginFailed, .loginThrottled, .handleClaimed, .profileUpdated,
        .localeChosen, .newDeviceAlerted:
        evolveSessions(&state, event, at: recordedAt)
    case .imported:
        evolveImport(&state, event, at: recordedAt)
    case .passwordSet, .passwordRehashed, .emailVerificationSent, .passwordResetRequested, .emailVerified, .emailLinksRevoked, .emailAdded,
        .emailAddRequested,
        .emailChangeRequested, .emailChanged, .emailRemoved, .emailReverted:
        evolveEmail(&state, event, at: recordedAt)
    case .phoneLinked, .phoneChanged, .phoneRemoved, .reauthGranted, .reauthNonceIssued, .reauthGrantsRevoked, .reauthLinkSent,
        .reauthFailed:
        evolvePhoneAndReauth(&state, event, at: recordedAt)
    case .providerLinked, .providerUnlinked, .providerTokensStored, .providerTokenRevoked, .appleNotificationReceived:
        evolveProviders(&state, event, at: recordedAt)
    case .totpEnrolmentStarted, .totpEnabled, .totpDisabled, .recoveryCodesRegenerated, .totpCodeUsed, .recoveryCodeUsed,
        .mfaChallengeIssued, .mfaChallengeFailed, .mfaChallengeEnded, .mfaDailyLimitReached:
        evolveTwoFactor(&state, event, at: recordedAt)
    case .passkeyRegistered, .passkeyRenamed, .passkeyUsed, .passkeyRemoved, .passkeySuspect:
        evolvePasskeys(&state, event, at: recordedAt)
    case .accountDisabled, .accountEnabled, .deletionRequested, .holdPlaced, .holdReleased, .holdLapsed, .deletionScheduled, .purged:
        evolveRemoval(&state, event, at: recordedAt)
    case .admin:
        evolveSupport(&state, event, at: recordedAt)
    case .avatarSet, .avatarRemoved:
        evolveAvatar(&state, event)
    }
    // Whatever changed, the state says since when only passkeys vouch for the account.
    state.passkeyOnlySince = state.vouchedForByPasskeysOnly ? state.passkeyOnlySince ?? recordedAt : nil
}
