import Foundation

/// `evolve` for the two-factor area's events: TOTP, recovery codes and second-factor challenges.
func evolveTwoFactor(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    switch event {
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
    case .mfaDailyLimitReached:
        break
    default:
        preconditionFailure("evolve routes \(event.type) elsewhere")
    }
}
