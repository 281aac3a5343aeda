import Foundation

/// `evolve` for the passkeys area's events: registered, renamed, used, removed, suspected.
func evolvePasskeys(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    switch event {
    case .passkeyRegistered(let registered):
        state.passkeyUserHandle = registered.userHandle
        state.passkeys[registered.passkeyID] = .init(
            id: registered.passkeyID, credentialID: registered.credentialID, publicKey: registered.publicKey,
            algorithm: registered.algorithm, signCount: registered.signCount, name: registered.name, createdAt: recordedAt,
            lastUsedAt: nil, backupEligible: registered.backupEligible, backedUp: registered.backedUp,
            transports: registered.transports, origin: .init(version: state.version, sessionID: registered.sessionID, at: recordedAt))
    case .passkeyRenamed(let renamed):
        state.passkeys[renamed.passkeyID]?.name = renamed.name
    case .passkeyUsed(let used):
        state.passkeys[used.passkeyID]?.signCount = used.signCount
        state.passkeys[used.passkeyID]?.backedUp = used.backedUp
        state.passkeys[used.passkeyID]?.lastUsedAt = recordedAt
    case .passkeyRemoved(let removed):
        state.passkeys[removed.passkeyID] = nil
    case .passkeySuspect:
        break
    default:
        preconditionFailure("evolve routes \(event.type) elsewhere")
    }
}
