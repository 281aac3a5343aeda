import Foundation

/// A live re-auth grant of this session (`X-Reauth-Token` until `expiresAt`).
public struct ReauthGrant: Sendable, Hashable {
    /// The `reauth_token`.
    public let token: String
    /// When it ends (15 minutes after it was earned).
    public let expiresAt: Date

    /// A grant as the service answered it.
    public init(token: String, expiresAt: Date) {
        self.token = token
        self.expiresAt = expiresAt
    }
}
