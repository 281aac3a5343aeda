import Foundation

/// `decide` for the avatar. The acting session was checked by `decide` itself
/// (`AccountCommand.actingSession`): a picture sent by a session that has since ended changes nothing.
func decideAvatar(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    try requireAccount(state)
    switch command {
    case .setAvatar(let etag, let sessionID):
        guard etag != state.avatarETag else { return [] }
        return [.avatarSet(.init(etag: etag, sessionID: sessionID))]
    case .removeAvatar(let sessionID):
        guard let etag = state.avatarETag else { return [] }
        return [.avatarRemoved(.init(etag: etag, sessionID: sessionID))]
    default:
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
}
