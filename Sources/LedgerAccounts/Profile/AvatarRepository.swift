import Foundation
import LedgerIdentity

/// Where the accounts' pictures are kept: sealed under each account's data key, beside its
/// stream, written in the transaction that appends the event (docs/accounts.md "Avatars").
/// `PostgresAvatarRepository` in production; the in-memory account repository in tests.
public protocol AvatarRepository: Sendable {
    /// Runs `command` (`setAvatar` or `removeAvatar`) against the account and, when it
    /// appended, stores `picture` under the new etag (or deletes the stored one), in one
    /// transaction. Returns the state after.
    func changeAvatar(_ accountID: UUID, picture: [UInt8]?, _ command: AccountCommand) async throws -> AccountState

    /// The picture a live (not deleted) account with this public id shows, when its version is `etag`.
    func avatar(of publicID: PublicUserID, etag: String) async throws -> [UInt8]?

    /// What the initials tile of a live account with this public id shows; nil for no such account.
    func tileSubject(of publicID: PublicUserID) async throws -> InitialsTile.Subject?
}

extension AvatarRepository {
    /// What `avatar` seals the picture bound to: the account and the version, so a sealed
    /// picture cannot be moved to another account's row or served as another version.
    public static func sealBinding(accountID: UUID, etag: String) -> [UInt8] {
        Array("account-ledger/avatar/".utf8) + accountID.bytes + Array(etag.utf8)
    }
}
