import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerImages

/// The account's picture (docs/accounts.md "Avatars"): uploaded, made again by libvips
/// (`AvatarImage`), sealed and served; else the initials tile.
public struct AvatarService: Sendable {
    let environment: AccountsEnvironment
    let avatars: any AvatarRepository
    public let urls: AvatarURLs
    /// Uploads read, made or waiting at once (`AvatarImage.Gate`).
    let gate = AvatarImage.Gate()

    public init(environment: AccountsEnvironment, avatars: any AvatarRepository, urls: AvatarURLs) {
        self.environment = environment
        self.avatars = avatars
        self.urls = urls
    }

    /// A new picture for the session's account: the upload is counted first
    /// (`RequestLimits.admitAvatarUpload`), then it takes a place in the gate (`busy` when
    /// none is free), then `body` is read, the picture made, and stored with its event.
    /// Returns its `avatar_url`.
    public func upload(for session: SessionRef, client: String?, body: () async throws -> [UInt8]) async throws -> String {
        try await environment.limits.admitAvatarUpload(accountID: session.accountID, client: client, now: environment.clock.now())
        let picture = try await gate.admit { try await AvatarImage.make(from: try await body()) }
        // Random, never a digest of the picture: the address must not confirm a guess of it.
        let etag = Hex.encode(try SecureRandom.bytes(16))
        let state = try await avatars.changeAvatar(
            session.accountID, picture: picture, .setAvatar(etag: etag, sessionID: session.sessionID))
        return urls.url(accountID: session.accountID, etag: state.avatarETag)
    }

    /// The picture goes; the account shows its initials tile again.
    public func remove(for session: SessionRef) async throws {
        _ = try await avatars.changeAvatar(session.accountID, picture: nil, .removeAvatar(sessionID: session.sessionID))
    }

    /// The JPEG of `/avatars/{user_id}.jpg?v={etag}`: nil unless a live account has that user
    /// id and shows that version.
    public func picture(userID: String, etag: String) async throws -> [UInt8]? {
        guard let publicID = PublicUserID(userID), Self.isWellFormed(etag: etag) else { return nil }
        return try await avatars.avatar(of: publicID, etag: etag)
    }

    /// The tile of `/avatars/{user_id}.svg`: nil unless a live account has that user id.
    public func tile(userID: String) async throws -> InitialsTile? {
        guard let publicID = PublicUserID(userID), let subject = try await avatars.tileSubject(of: publicID) else { return nil }
        return InitialsTile(subject)
    }

    /// An etag as `upload` makes them: 32 lower-case hex digits.
    static func isWellFormed(etag: String) -> Bool {
        etag.utf8.count == 32 && etag.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
