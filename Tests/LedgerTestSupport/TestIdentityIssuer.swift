import CryptoExtras
import Foundation
import JWTKit
import LedgerCore
import LedgerProviders

/// Plays Apple or Google for the tests: its own RSA (RS256) and P-256 (ES256) keys, a JWKS
/// file the service reads, and ID tokens signed with either key.
public struct TestIdentityIssuer: Sendable {
    public static let rsaKeyID = "rsa-1"
    public static let ecKeyID = "ec-1"

    public let issuer: String
    public let audience: String
    /// Where the JWKS is written (`LEDGER_APPLE_JWKS` / `LEDGER_GOOGLE_JWKS`).
    public let jwksPath: String
    let signers: JWTKeyCollection
    let rsaPublic: (modulus: Data, exponent: Data)
    let ecPublic: (x: String, y: String)

    public init(issuer: String, audience: String) async throws {
        self.issuer = issuer
        self.audience = audience
        jwksPath = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-\(UUID().uuidString).json").path
        let rsa = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let ec = ES256PrivateKey()
        let primitives = try rsa.publicKey.getKeyPrimitives()
        rsaPublic = (primitives.modulus, primitives.publicExponent)
        ecPublic = try ec.publicKey.parameters ?? { throw JWTError.generic(identifier: "ec", reason: "no parameters") }()
        signers = JWTKeyCollection()
        await signers.add(rsa: rsa, digestAlgorithm: .sha256, kid: JWKIdentifier(string: Self.rsaKeyID))
        await signers.add(ecdsa: ec, kid: JWKIdentifier(string: Self.ecKeyID))
        try publish([Self.rsaKeyID, Self.ecKeyID])
    }

    /// Writes a JWKS holding the public keys named (a rotation is a new call).
    public func publish(_ keyIDs: [String]) throws {
        var keys: [[String: String]] = []
        if keyIDs.contains(Self.rsaKeyID) {
            keys.append([
                "kty": "RSA", "kid": Self.rsaKeyID, "alg": "RS256", "use": "sig",
                "n": Base64URL.encode(Array(rsaPublic.modulus)), "e": Base64URL.encode(Array(rsaPublic.exponent)),
            ])
        }
        if keyIDs.contains(Self.ecKeyID) {
            keys.append(["kty": "EC", "kid": Self.ecKeyID, "alg": "ES256", "use": "sig", "crv": "P-256", "x": ecPublic.x, "y": ecPublic.y])
        }
        try JSONSerialization.data(withJSONObject: ["keys": keys]).write(to: URL(fileURLWithPath: jwksPath))
    }

    /// An ID token; every claim can be bent for a test.
    public func token(
        subject: String, email: String? = nil, emailVerified: Bool? = nil, isPrivateEmail: Bool? = nil, nonce: String? = nil,
        issuer: String? = nil, audience: String? = nil, expires: Date = Date().addingTimeInterval(600), issuedAt: Date = Date(),
        keyID: String = rsaKeyID
    ) async throws -> String {
        let claims = Claims(
            iss: issuer ?? self.issuer, sub: subject, aud: audience ?? self.audience, exp: Int(expires.timeIntervalSince1970),
            iat: Int(issuedAt.timeIntervalSince1970), nonce: nonce, email: email, email_verified: emailVerified,
            is_private_email: isPrivateEmail)
        return try await signers.sign(claims, kid: JWKIdentifier(string: keyID))
    }

    /// A Sign in with Apple server-to-server notification, as Apple posts it in `{payload}`:
    /// the event a JSON string in the `events` claim.
    public func appleNotification(
        type: String, subject: String, id: String = UUID().uuidString, audience: String? = nil, issuer: String? = nil,
        issuedAt: Date = Date(), keyID: String = rsaKeyID
    ) async throws -> String {
        let event = try JSONSerialization.data(
            withJSONObject: ["type": type, "sub": subject, "event_time": 1_790_000_000_000, "email": "x@privaterelay.appleid.com"])
        let claims = AppleNotificationPayload(
            iss: issuer ?? self.issuer, aud: audience ?? self.audience, iat: Int(issuedAt.timeIntervalSince1970), jti: id,
            events: String(decoding: event, as: UTF8.self))
        return try await signers.sign(claims, kid: JWKIdentifier(string: keyID))
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
        let is_private_email: Bool?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }
}
