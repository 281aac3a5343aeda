import Foundation

/// `evolve` for the email area's events: the address, its links and the password.
func evolveEmail(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    switch event {
    case .passwordSet(let set):
        state.passwordHash = set.passwordHash
        if set.reason.changesThePassword { state.passwordChangedAt = recordedAt }
        if set.reason.endsResetLinks { state.pendingLinks = state.pendingLinks.filter { $0.value.purpose != .passwordReset } }
        // A new password ends the sign-ins waiting for their second factor, and a reset forgets
        // the known devices (`PasswordSetReason` says which does what).
        if set.reason.endsSecondFactorChallenges { state.mfaChallenges = [:] }
        if set.reason.forgetsKnownDevices { state.knownDevices = [] }
    case .passwordRehashed(let rehashed):
        state.passwordHash = rehashed.passwordHash
    case .emailVerificationSent(let sent):
        state.pendingLinks[sent.linkID] = .init(id: sent.linkID, purpose: .verifyEmail, email: sent.email, expiresAt: sent.expiresAt)
        state.linkSent(.verifyEmail, at: recordedAt)
    case .passwordResetRequested(let sent):
        state.pendingLinks[sent.linkID] = .init(id: sent.linkID, purpose: .passwordReset, email: sent.email, expiresAt: sent.expiresAt)
        state.linkSent(.passwordReset, at: recordedAt)
    case .emailVerified(let verified):
        if EmailAddress.normalize(verified.email) == state.email.map(EmailAddress.normalize) { state.emailVerified = true }
        state.pendingLinks = state.pendingLinks.filter { $0.value.purpose != .verifyEmail }
    case .emailLinksRevoked(let revoked):
        for linkID in revoked.linkIDs { state.pendingLinks[linkID] = nil }
        if let pending = state.pendingEmail, revoked.linkIDs.contains(pending.linkID) { state.pendingEmail = nil }
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
        // A revert ends the sign-ins waiting for their second factor and forgets the known devices.
        state.mfaChallenges = [:]
        state.knownDevices = []
    default:
        preconditionFailure("evolve routes \(event.type) elsewhere")
    }
}
