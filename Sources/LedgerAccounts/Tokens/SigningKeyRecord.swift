import Foundation

/// One access-token signing key as it is stored: its private half sealed (`SigningKeySeal`),
/// its public half the JWK coordinates `/.well-known/jwks.json` publishes.
public struct SigningKeyRecord: Sendable, Equatable {
    /// The key's id, in every token's `kid` header.
    public let kid: String
    /// The private key, sealed; nil once the key is retired and its private half erased.
    public var sealedKey: [UInt8]?
    /// The fingerprint of the master key that sealed it (`MasterKey.keyID`).
    public let masterKeyID: String
    /// The public point, base64url as a JWK carries it.
    public let x: String
    public let y: String
    public let createdAt: Date
    /// When it starts signing (a newer key's activation ends that).
    public let activatesAt: Date

    public init(
        kid: String, sealedKey: [UInt8]?, masterKeyID: String, x: String, y: String, createdAt: Date, activatesAt: Date
    ) {
        self.kid = kid
        self.sealedKey = sealedKey
        self.masterKeyID = masterKeyID
        self.x = x
        self.y = y
        self.createdAt = createdAt
        self.activatesAt = activatesAt
    }

    /// The key as a JWK (RFC 7517) of the key set.
    public var jwk: [String: String] {
        ["kty": "EC", "crv": "P-256", "x": x, "y": y, "kid": kid, "use": "sig", "alg": "ES256"]
    }
}
