import Foundation

/// What access tokens look like (docs/api.md "Access tokens that other services verify").
public struct AccessTokenSettings: Sendable, Equatable {
    public enum Format: String, Sendable, CaseIterable {
        /// `la_…`: 32 random bytes, meaningful only to this service.
        case opaque
        /// An ES256 JWT (RFC 9068) that other services verify against `/.well-known/jwks.json`.
        case jwt
    }

    public var format: Format
    /// `iss`: the service's origin.
    public var issuer: String
    /// `aud`: who the tokens are for.
    public var audience: String
    /// `client_id`: the app the tokens are issued to.
    public var clientID: String

    public init(format: Format = .opaque, issuer: String, audience: String = "321fit", clientID: String = "321fit-app") {
        self.format = format
        self.issuer = issuer
        self.audience = audience
        self.clientID = clientID
    }
}
