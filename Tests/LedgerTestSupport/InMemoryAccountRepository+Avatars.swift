import Foundation
import LedgerAccounts
import LedgerIdentity

/// `PostgresAvatarRepository`'s twin: the picture stored or deleted with its event, in the same actor turn.
extension InMemoryAccountRepository: AvatarRepository {
    public func changeAvatar(_ accountID: UUID, picture: [UInt8]?, _ command: AccountCommand) async throws -> AccountState {
        let (state, events) = try await execute(accountID) { _ in command }
        guard !events.isEmpty else { return state }
        if let picture, let etag = state.avatarETag {
            avatars[accountID] = (etag, picture)
        } else if state.avatarETag == nil {
            avatars[accountID] = nil
        }
        return state
    }

    public func avatar(of publicID: PublicUserID, etag: String) async throws -> [UInt8]? {
        for accountID in try await accounts(withPublicID: publicID) {
            if let stored = avatars[accountID], stored.etag == etag, isLive(accountID) { return stored.picture }
        }
        return nil
    }

    public func tileSubject(of publicID: PublicUserID) async throws -> InitialsTile.Subject? {
        let live = try await accounts(withPublicID: publicID).filter(isLive)
        guard live.count == 1, let state = try? await load(live[0]) else { return nil }
        return InitialsTile.Subject(
            accountID: state.accountID, displayName: state.displayName, handle: state.handle, handleIsTemporary: state.handleIsTemporary)
    }
}
