import Foundation

/// `evolve` for the providers area's events: Apple and Google, and their tokens.
func evolveProviders(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    switch event {
    case .providerLinked(let linked):
        state.providerSubjects[linked.provider] = linked.subject
        state.methodOrigins[linked.provider.rawValue] = .init(version: state.version, sessionID: linked.sessionID, at: recordedAt)
    case .providerUnlinked(let unlinked):
        state.providerSubjects[unlinked.provider] = nil
        state.methodOrigins[unlinked.provider.rawValue] = nil
    case .providerTokensStored(let stored):
        state.providerTokens[stored.provider] = .init(
            provider: stored.provider, subject: stored.subject, clientID: stored.clientID, refreshToken: stored.refreshToken)
    case .providerTokenRevoked(let revoked):
        state.providerTokens[revoked.provider] = nil
    case .appleNotificationReceived(let received):
        state.appleNotificationIDs = Array((state.appleNotificationIDs + [received.notificationID]).suffix(appleNotificationMemory))
    default:
        preconditionFailure("evolve routes \(event.type) elsewhere")
    }
}
