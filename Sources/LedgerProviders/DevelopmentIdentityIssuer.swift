import Foundation
import JWTKit
import LedgerCore
import LedgerIdentity

/// Plays Apple and Google on a developer's machine, so the provider flows can be walked with
/// curl: an ES256 key kept in a PEM file, the JWKS the service reads (`LEDGER_APPLE_JWKS` /
/// `LEDGER_GOOGLE_JWKS` pointed at the file), and ID tokens signed with it. Never for
/// production: whoever holds the key can sign in as anyone.
public struct DevelopmentIdentityIssuer: Sendable {
    public static let keyID = "ledger-dev-1"
    /// The audience of development tokens; put it in `LEDGER_*_CLIENT_IDS`.
    public static let audience = "ledger-dev"

    let key: ES256PrivateKey

    /// Loads the key at `keyPath`, creating it (mode 0600) on first use, and writes the JWKS to `jwksPath`.
    public init(keyPath: String, jwksPath: String) throws {
        if let pem = try? String(contentsOfFile: keyPath, encoding: .utf8) {
            key = try ES256PrivateKey(pem: pem)
        } else {
            key = ES256PrivateKey()
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: keyPath).deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyPath), options: .atomic)
            chmod(keyPath, 0o600)
        }
        guard let parameters = key.publicKey.parameters else {
            throw JWTError.generic(identifier: "dev-issuer", reason: "the key has no public parameters")
        }
        let jwks = [
            "keys": [
                [
                    "kty": "EC", "kid": Self.keyID, "alg": "ES256", "use": "sig", "crv": "P-256",
                    "x": parameters.x, "y": parameters.y,
                ]
            ]
        ]
        try JSONSerialization.data(withJSONObject: jwks, options: [.sortedKeys]).write(to: URL(fileURLWithPath: jwksPath))
    }

    /// An ID token as `provider` would issue it, valid for 10 minutes from `now`.
    public func token(
        provider: IdentityProvider, subject: String, email: String?, emailVerified: Bool, nonce: String?, now: Date = Date()
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: Self.keyID))
        let claims = Claims(
            iss: provider == .apple ? "https://appleid.apple.com" : "https://accounts.google.com", sub: subject, aud: Self.audience,
            exp: Int(now.timeIntervalSince1970) + 600, iat: Int(now.timeIntervalSince1970), nonce: nonce, email: email,
            email_verified: email == nil ? nil : emailVerified)
        return try await keys.sign(claims, kid: JWKIdentifier(string: Self.keyID))
    }

    /// A Sign in with Apple server-to-server notification (`{"payload": …}` for
    /// `POST /webhooks/apple`), signed like Apple's, its event a JSON string in `events`.
    public func appleNotification(type: String, subject: String, id: String = UUID().uuidString, now: Date = Date()) async throws -> String
    {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: Self.keyID))
        let event = try JSONSerialization.data(
            withJSONObject: ["type": type, "sub": subject, "event_time": Int64(now.timeIntervalSince1970 * 1000)], options: [.sortedKeys])
        let claims = AppleNotificationPayload(
            iss: "https://appleid.apple.com", aud: Self.audience, iat: Int(now.timeIntervalSince1970), jti: id,
            events: String(decoding: event, as: UTF8.self))
        return try await keys.sign(claims, kid: JWKIdentifier(string: Self.keyID))
    }

    struct Claims: JWTPayload {
        let iss: String
        let sub: String
        let aud: String
        let exp: Int
        let iat: Int
        let nonce: String?
        let email: String?
        let email_verified: Bool?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
