import Foundation

extension AccountEvent {
    /// The provider's refresh token, fetched with the app's authorization code and kept so the
    /// service can revoke it at the provider (on disconnect, deletion, Apple's consent-revoked).
    /// Like every payload it is sealed with the account's data key, so a purge erases it; the
    /// feed and exports leave `refresh_token` out.
    public struct ProviderTokensStored: Codable, Sendable, Equatable {
        public var provider: IdentityProvider
        /// The provider user (`sub`) the token belongs to: the account's linked identity.
        public var subject: String
        /// The app's client id the code was issued to; the revocation names it again.
        public var clientID: String
        public var refreshToken: String
        /// The revocation that waited for this token in the outbox while its sign-in was not
        /// done (a second factor, a `link_token`): the same transaction withdraws it.
        public var parkedRevocationID: UUID?
        enum CodingKeys: String, CodingKey {
            case provider, subject, clientID = "client_id", refreshToken = "refresh_token", parkedRevocationID = "parked_revocation_id"
        }

        public init(provider: IdentityProvider, subject: String, clientID: String, refreshToken: String, parkedRevocationID: UUID? = nil) {
            self.provider = provider
            self.subject = subject
            self.clientID = clientID
            self.refreshToken = refreshToken
            self.parkedRevocationID = parkedRevocationID
        }
    }

    /// The account gave up its stored refresh token, and the same transaction queued its
    /// revocation at the provider in the outbox (retried until the provider accepts it).
    public struct ProviderTokenRevoked: Codable, Sendable, Equatable {
        public var provider: IdentityProvider
        /// `disconnected`, `account_deleted`, `apple_consent_revoked`.
        public var reason: String

        public init(provider: IdentityProvider, reason: String) {
            self.provider = provider
            self.reason = reason
        }
    }
}
