import Foundation
import JWTKit

/// The claims of a JWT access token, in the profile of RFC 9068: who (`sub`), which session
/// (`sid`), since when (`auth_time`) and how (`amr`, RFC 8176) the person signed in.
public struct AccessTokenClaims: JWTPayload, Equatable {
    public var issuer: String
    public var subject: String
    public var audience: String
    public var clientID: String
    public var issuedAt: Int
    public var expiresAt: Int
    /// base64url of the SHA-256 the session keeps for its current access token: the service
    /// finds the session by it, and a refresh that replaces the token ends this one.
    public var tokenID: String
    public var sessionID: String
    public var authTime: Int
    public var methods: [String]
    public var emailVerified: Bool

    enum CodingKeys: String, CodingKey {
        case issuer = "iss", subject = "sub", audience = "aud", clientID = "client_id", issuedAt = "iat", expiresAt = "exp"
        case tokenID = "jti", sessionID = "sid", authTime = "auth_time", methods = "amr", emailVerified = "email_verified"
    }

    public init(
        issuer: String, subject: String, audience: String, clientID: String, issuedAt: Int, expiresAt: Int, tokenID: String,
        sessionID: String, authTime: Int, methods: [String], emailVerified: Bool
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.clientID = clientID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.tokenID = tokenID
        self.sessionID = sessionID
        self.authTime = authTime
        self.methods = methods
        self.emailVerified = emailVerified
    }

    /// Nothing here: `JWTAccessTokens` checks issuer, audience and expiry against its own clock.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}

    /// RFC 8176 values for a session's sign-in `method` and the second factor it passed.
    public static func methods(signIn method: String, secondFactor: String?) -> [String] {
        var methods: [String] =
            switch method {
            case "email": ["pwd"]
            case "phone": ["sms"]
            case "apple", "google": ["fed"]
            case "passkey": ["hwk"]
            // A link mailed to the account's address (RFC 8176 registers no value for it; "email"
            // is what other identity providers print for an emailed proof).
            case "email_link": ["email"]
            default: []
            }
        if secondFactor != nil { methods += ["otp", "mfa"] }
        return methods
    }
}
