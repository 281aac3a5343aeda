import Foundation
import LedgerCrypto

/// `decide` for two-factor authentication.
func decideTwoFactor(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    let now = context.now
    switch command {
    case .recordMFADailyLimit(let until, let sessionID):
        // Only where a second factor is on: wrong TOTP re-auths of an account without one guess
        // nothing, and telling its owner would let a session holder fill their mailbox.
        guard state.exists, !state.isDeleted, state.isTOTPEnabled else { return [] }
        return [.mfaDailyLimitReached(.init(until: until, sessionID: sessionID))]

    case .startTOTPEnrolment(let secret, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard !state.isTOTPEnabled else { throw IdentityError.mfaAlreadyEnabled }
        // Whoever registered an address they do not own must not lock its owner out with a second
        // factor: a grant earned by the password of an unverified email does not serve `manageMFA`
        // (`requireReauth`), and the email link that does verifies the address.
        try state.requireReauth(.manageMFA, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.totpEnrolmentStarted(.init(secret: secret, sessionID: sessionID))]

    case .confirmTOTP(let step, let recoveryCodeHashes, let sessionID):
        try requireAccount(state)
        guard let totp = state.totp, totp.enabled || totp.enrolledBy == nil || totp.enrolledBy == sessionID else {
            throw IdentityError(.mfaNotEnabled, "Set up two-factor authentication first.")
        }
        guard !totp.enabled else { throw IdentityError.mfaAlreadyEnabled }
        guard let step, step > (totp.lastUsedStep ?? .min) else { throw IdentityError.incorrectCode(attemptsRemaining: nil) }
        return [.totpCodeUsed(.init(step: step)), .totpEnabled(.init(recoveryCodeHashes: recoveryCodeHashes, sessionID: sessionID))]

    case .disableTOTP(let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.totp != nil else { throw IdentityError.mfaNotEnabled }
        try state.requireReauth(.manageMFA, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.totpDisabled(.init(pending: state.isTOTPEnabled ? nil : true))]

    case .regenerateRecoveryCodes(let hashes, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.isTOTPEnabled else { throw IdentityError.mfaNotEnabled }
        try state.requireReauth(.manageMFA, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.recoveryCodesRegenerated(.init(recoveryCodeHashes: hashes, sessionID: sessionID))]

    case .completeMFAChallenge(let challengeID, let tokenHash, let proof, let session):
        try requireAccount(state)
        guard !state.isDisabled else { throw IdentityError.accountDisabled }
        guard let challenge = state.mfaChallenges[challengeID], now < challenge.expiresAt, state.isTOTPEnabled,
            ConstantTime.equals(Array(challenge.tokenHash.utf8), Array(tokenHash.utf8))
        else { throw IdentityError.mfaExpired }
        guard let used = state.secondFactor(proof) else {
            let failures = challenge.failures + 1
            let ended: [AccountEvent] =
                failures >= context.policies.mfaMaxFailures
                ? [.mfaChallengeEnded(.init(challengeID: challengeID, reason: "too_many_failures"))] : []
            return [.mfaChallengeFailed(.init(challengeID: challengeID, failures: failures))] + ended
        }
        var started = session
        started.method = challenge.method
        started.device = challenge.device
        started.deviceID = challenge.deviceID
        started.secondFactor = proof.factor
        // The provider's refresh token the sign-in fetched is the account's now; its parked
        // revocation is withdrawn in the same transaction.
        let kept: [AccountEvent] =
            challenge.providerToken.flatMap { token in
                state.providerSubjects[token.provider] == token.subject
                    ? [storedToken(token, parkedRevocation: challenge.parkedRevocationID)] : nil
            } ?? []
        return [used, .mfaChallengeEnded(.init(challengeID: challengeID, reason: "passed")), sessionStarted(started)] + kept
            + newDeviceAlert(state, started)

    case .grantReauthByTOTP(let sessionID, let grant, let step):
        try requireAccount(state)
        guard state.sessions[sessionID]?.isActive == true else { throw IdentityError.sessionExpired }
        guard state.isTOTPEnabled, let used = state.secondFactor(.totp(step: step)) else {
            throw IdentityError.incorrectCode(attemptsRemaining: nil)
        }
        return [used, reauthGranted(grant, sessionID: sessionID, linkID: nil, nonceID: nil, now: now)]

    default:
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
}
