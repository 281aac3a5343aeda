import Foundation

/// `decide` for passkeys. The relying party's checks (challenge, origin, signature) are done
/// before the command, by `LedgerWebAuthn`; these are the account's rules: re-auth, the
/// last-method guard, one account per credential, and the signature counter against the
/// stored one, here under the stream's lock so two racing sign-ins cannot both pass it.
func decidePasskeys(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    let now = context.now
    switch command {
    case .registerPasskey(let passkey, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.sessions[sessionID]?.isActive == true else { throw IdentityError.sessionExpired }
        try state.requireReauth(.addMethod, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        // The options named the account's handle, or a new one when it had none: a handle that
        // is neither came from options for another account (or from before a first registration
        // raced this one).
        guard state.passkeyUserHandle == nil || state.passkeyUserHandle == passkey.userHandle else {
            throw IdentityError.invalidCredential
        }
        guard state.passkey(credentialID: passkey.credentialID) == nil else { throw IdentityError.passkeyExists }
        guard state.passkeys.count < maximumPasskeys else { throw IdentityError.passkeyLimit }
        var registered = passkey
        registered.sessionID = sessionID
        return [.passkeyRegistered(registered)]

    case .renamePasskey(let passkeyID, let name):
        try requireAccount(state)
        guard let passkey = state.passkeys[passkeyID] else { throw IdentityError.passkeyNotFound }
        guard passkey.name != name else { return [] }
        return [.passkeyRenamed(.init(passkeyID: passkeyID, name: name))]

    case .removePasskey(let passkeyID, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.passkeys[passkeyID] != nil else { throw IdentityError.passkeyNotFound }
        // Before re-auth, like a disconnect: no grant makes the last way in removable.
        guard !state.isLastMethod(passkey: passkeyID) else {
            throw IdentityError(.lastMethod, "Add another way to sign in before removing this passkey.")
        }
        try state.requireReauth(.managePasskeys, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        // A passkey-only account's grant may come from one of its passkeys: never the one it removes.
        if let tokenHash = reauthTokenHash, state.reauthGrant(tokenHash: tokenHash, sessionID: sessionID, now: now)?.passkeyID == passkeyID
        {
            throw IdentityError(.reauthRequired, "Verify it's you with another passkey to remove this one.")
        }
        return [.passkeyRemoved(.init(passkeyID: passkeyID))]

    case .signInWithPasskey(let assertion, let session):
        // A deleted account's passkeys open nothing, and look like any unknown passkey.
        guard state.exists, !state.isDeleted else { throw IdentityError.invalidCredential }
        guard !state.isDisabled else { throw IdentityError.accountDisabled }
        let used = try passkeyUse(state, assertion, purpose: .signIn, sessionID: session.sessionID)
        guard case .passkeyUsed = used else { return [used] }
        var started = session
        started.method = SignInMethod.passkey.rawValue
        return [used, sessionStarted(started)] + newDeviceAlert(state, started)

    case .grantReauthByPasskey(let sessionID, let grant, let assertion):
        try requireAccount(state)
        guard state.sessions[sessionID]?.isActive == true else { throw IdentityError.sessionExpired }
        let used = try passkeyUse(state, assertion, purpose: .reauth, sessionID: sessionID)
        guard case .passkeyUsed = used else { return [used] }
        return [used, reauthGranted(grant, sessionID: sessionID, linkID: nil, nonceID: nil, passkeyID: assertion.passkeyID, now: now)]

    case .recordPasskeySuspect(let passkeyID, let presented):
        guard state.exists, let passkey = state.passkeys[passkeyID] else { return [] }
        let use = try passkeyUse(
            state, .init(passkeyID: passkeyID, signCount: presented, backedUp: passkey.backedUp), purpose: .signIn, sessionID: UUID())
        guard case .passkeySuspect = use else { return [] }
        return [use]

    default:
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
}

/// The assertion's use of one of the account's passkeys, or `passkey.suspect` when its counter
/// did not grow (docs/passkeys.md: a counter of 0 on both sides is a passkey that never counts).
private func passkeyUse(
    _ state: AccountState, _ assertion: AccountCommand.PasskeyAssertion, purpose: AccountEvent.PasskeyUsed.Purpose, sessionID: UUID
) throws -> AccountEvent {
    guard let passkey = state.passkeys[assertion.passkeyID] else { throw IdentityError.invalidCredential }
    if (assertion.signCount != 0 || passkey.signCount != 0) && assertion.signCount <= passkey.signCount {
        return .passkeySuspect(
            .init(passkeyID: passkey.id, storedSignCount: passkey.signCount, presentedSignCount: assertion.signCount))
    }
    return .passkeyUsed(
        .init(passkeyID: passkey.id, signCount: assertion.signCount, backedUp: assertion.backedUp, purpose: purpose, sessionID: sessionID))
}
