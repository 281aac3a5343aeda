import Foundation
import LedgerCrypto

/// `decide` for sessions, sign-up and the profile.
func decideSessions(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    let now = context.now
    switch command {
    case .register(let registration):
        guard !state.exists else { throw IdentityError(.accountExists, "This email is already in use. Log in instead.") }
        return [
            .registered(.init(email: registration.email.value, displayName: registration.displayName, method: "email")),
            .passwordSet(.init(passwordHash: registration.passwordHash, reason: .signup)),
            .handleClaimed(.init(handle: registration.handle.value, temporary: registration.handleIsTemporary)),
            .emailVerificationSent(
                .init(
                    email: registration.email.value, linkID: registration.verificationLink.linkID,
                    expiresAt: registration.verificationLink.expiresAt, tokenHash: registration.verificationLink.tokenHash)),
            sessionStarted(registration.session),
        ]

    case .startSession(let session, let proof):
        return try startSession(state, session, proof: proof)

    case .refreshSession(let sessionID, let presented, let replacement):
        guard let session = state.sessions[sessionID] else { throw IdentityError.sessionExpired }
        guard session.isActive else { throw IdentityError.sessionExpired(lastMethod: session.method) }
        if session.refreshTokenHash != presented {
            // The session was issued this token and has since exchanged it: a spent refresh
            // token came back, so someone holds a copy. End the session.
            return [.sessionRevoked(.init(sessionID: sessionID, reason: "refresh_token_reused"))]
        }
        guard session.refreshExpiresAt > now else {
            throw IdentityError.sessionExpired(lastMethod: session.method)
        }
        return [
            .sessionRefreshed(
                .init(
                    sessionID: sessionID, accessTokenHash: replacement.accessTokenHash, refreshTokenHash: replacement.refreshTokenHash,
                    accessExpiresAt: replacement.accessExpiresAt, refreshExpiresAt: replacement.refreshExpiresAt))
        ]

    case .revokeSession(let sessionID, let reason):
        guard let session = state.sessions[sessionID] else { throw IdentityError(.notFound, "No such session.") }
        return session.isActive ? [.sessionRevoked(.init(sessionID: sessionID, reason: reason))] : []

    case .revokeOtherSessions(let keep):
        try requireAccount(state)
        return revokeSessions(state, reason: "signed_out_elsewhere", except: keep)

    case .recordLoginFailure(let failures, let lockedUntil):
        try requireAccount(state)
        return [.loginFailed(.init(failures: failures))] + (lockedUntil.map { [.loginThrottled(.init(until: $0))] } ?? [])

    case .updateProfile(let displayName, let handle, let locale):
        try requireAccount(state)
        var events: [AccountEvent] = []
        if let displayName, displayName != state.displayName {
            events.append(.profileUpdated(.init(displayName: displayName)))
        }
        if let handle, handle.value != state.handle || state.handleIsTemporary {
            events.append(.handleClaimed(.init(handle: handle.value, temporary: false)))
        }
        if case .some(let locale) = locale, locale != state.chosenLocale {
            guard locale.map({ Language(tag: $0) != nil }) ?? true else {
                throw IdentityError(.invalidLocale, "Choose ka, en or ru.")
            }
            events.append(.localeChosen(.init(locale: locale)))
        }
        return events

    case .registerByPhone(let registration):
        guard !state.exists else { throw IdentityError(.accountExists, "This account already exists.") }
        return [
            .registered(.init(email: nil, displayName: nil, method: "phone")),
            .phoneLinked(.init(phone: registration.phone.e164, region: registration.phone.region, requestID: registration.requestID)),
            .handleClaimed(.init(handle: registration.handle.value, temporary: true)),
            sessionStarted(registration.session),
        ]

    default:
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
}

/// A sign-in whose proof was checked: the session, or a second-factor challenge instead.
func startSession(_ state: AccountState, _ session: AccountCommand.NewSession, proof: SignInProof) throws -> [AccountEvent] {
    try requireAccount(state)
    // What the sign-in checked may have left the account meanwhile (a revert, a reset or a
    // removal committed while scrypt ran): then it proves nothing.
    guard state.stillHolds(proof) else { throw IdentityError.credentialGone(proof) }
    guard !state.isDisabled else { throw IdentityError.accountDisabled }
    // Two-factor on: no session yet, a challenge instead. A sign-in path that brings no
    // challenge is refused here rather than let through without the second factor.
    if state.isTOTPEnabled {
        guard let stepUp = session.stepUp else { throw IdentityError(.mfaRequired, "Enter the code from your authenticator app.") }
        return [
            .mfaChallengeIssued(
                .init(
                    challengeID: stepUp.challengeID, tokenHash: stepUp.tokenHash, method: session.method, device: session.device,
                    expiresAt: stepUp.expiresAt, linkToken: stepUp.linkToken, deviceID: session.deviceID ?? session.sessionID,
                    providerToken: stepUp.providerToken, parkedRevocationID: stepUp.parkedRevocationID))
        ]
    }
    return [sessionStarted(session)] + newDeviceAlert(state, session)
}
