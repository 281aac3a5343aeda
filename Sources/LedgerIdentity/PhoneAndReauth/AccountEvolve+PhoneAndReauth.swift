import Foundation

/// `evolve` for the phone and re-auth area's events: the phone number and "verify it's you".
func evolvePhoneAndReauth(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    switch event {
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
    case .reauthLinkSent(let sent):
        state.pendingLinks[sent.linkID] = .init(
            id: sent.linkID, purpose: .reauth, email: sent.email, expiresAt: sent.expiresAt, sessionID: sent.sessionID)
        state.linkSent(.reauth, at: recordedAt)
    case .reauthFailed:
        break
    case .phoneRemoved:
        state.phone = nil
        state.phoneRegion = nil
        state.methodOrigins[SignInMethod.phone.rawValue] = nil
    default:
        preconditionFailure("evolve routes \(event.type) elsewhere")
    }
}
