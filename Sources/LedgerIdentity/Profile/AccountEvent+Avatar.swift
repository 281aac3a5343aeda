import Foundation

/// The avatar's events: a picture set or removed. The picture itself is not in them: it is
/// stored sealed beside the stream (`avatars`, schema/036_avatars.sql) under its `etag`, and
/// an event consumer that wants it follows `avatar_url` (docs/accounts.md "Avatars").
extension AccountEvent {
    /// A version of the picture (`avatar.set`: the one the account now shows; `avatar.removed`:
    /// the one that went), and the session that set or removed it.
    public struct AvatarVersion: Codable, Sendable, Equatable {
        /// Random (not a digest of the picture, which would let a guess be confirmed), and new for every upload.
        public var etag: String
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey { case etag, sessionID = "session_id" }

        public init(etag: String, sessionID: UUID?) {
            self.etag = etag
            self.sessionID = sessionID
        }
    }

    /// The avatar's events in the catalogue (`AccountEvent.registry`).
    static let avatarRegistrations: [Registration] = [
        .init(.avatarSet, AvatarVersion.self, AccountEvent.avatarSet, emittedBy: ["setAvatar"]),
        .init(.avatarRemoved, AvatarVersion.self, AccountEvent.avatarRemoved, emittedBy: ["removeAvatar"]),
    ]
}
