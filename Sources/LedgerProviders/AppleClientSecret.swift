import Foundation
import JWTKit

/// The `client_secret` Apple's token and revoke endpoints take: a short-lived JWT signed (ES256)
/// with the team's Sign in with Apple key (`LEDGER_APPLE_PRIVATE_KEY`, `LEDGER_APPLE_KEY_ID`,
/// `LEDGER_APPLE_TEAM_ID`), issued by the team, about the app's client id, for Apple.
public struct AppleClientSecret: Sendable {
    public let teamID: String
    public let keyID: String
    let key: ES256PrivateKey

    public static let audience = "https://appleid.apple.com"
    /// How long one secret is good for: each call makes its own, so a leaked one soon expires
    /// (Apple allows up to six months).
    public static let lifetime: TimeInterval = 300

    /// - Parameter privateKeyPEM: the `.p8` file's contents (a PKCS#8 P-256 key).
    public init(teamID: String, keyID: String, privateKeyPEM: String) throws {
        self.teamID = teamID
        self.keyID = keyID
        self.key = try ES256PrivateKey(pem: privateKeyPEM)
    }

    /// A secret for `clientID`, issued at `now`.
    public func make(clientID: String, now: Date) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
        let issuedAt = Int(now.timeIntervalSince1970)
        return try await keys.sign(
            Claims(iss: teamID, iat: issuedAt, exp: issuedAt + Int(Self.lifetime), aud: Self.audience, sub: clientID),
            kid: JWKIdentifier(string: keyID))
    }

    struct Claims: JWTPayload {
        let iss: String
        let iat: Int
        let exp: Int
        let aud: String
        let sub: String

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
