import JWTKit

/// The claims of a Sign in with Apple server-to-server notification as Apple signs them, the
/// event a JSON string in `events`: for the development and test issuers that play Apple.
public struct AppleNotificationPayload: JWTPayload {
    public let iss: String
    public let aud: String
    public let iat: Int
    public let jti: String
    public let events: String

    public init(iss: String, aud: String, iat: Int, jti: String, events: String) {
        self.iss = iss
        self.aud = aud
        self.iat = iat
        self.jti = jti
        self.events = events
    }

    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
