import Foundation

/// `evolve` for the avatar's events.
func evolveAvatar(_ state: inout AccountState, _ event: AccountEvent) {
    switch event {
    case .avatarSet(let set):
        state.avatarETag = set.etag
    case .avatarRemoved:
        state.avatarETag = nil
    default:
        preconditionFailure("evolve routes \(event.type) elsewhere")
    }
}
