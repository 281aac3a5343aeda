import Foundation
import LedgerIdentity

/// Where an account's picture is served (`avatar_url`): the uploaded one at
/// `/avatars/{user_id}.jpg?v={etag}` (the etag is random, so the address is not guessed from
/// the user id, and a new picture has a new address), else the initials tile at
/// `/avatars/{user_id}.svg`, both under the service's public origin (`LEDGER_ISSUER`).
public struct AvatarURLs: Sendable {
    /// The origin the apps reach the service at, without a trailing slash.
    public let base: String

    public init(base: String) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// The account's `avatar_url`.
    public func url(accountID: UUID, etag: String?) -> String {
        let userID = PublicUserID(accountID: accountID).description
        guard let etag else { return "\(base)/avatars/\(userID).svg" }
        return "\(base)/avatars/\(userID).jpg?v=\(etag)"
    }
}
