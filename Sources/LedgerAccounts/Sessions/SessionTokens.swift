import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Opaque bearer tokens: 32 random bytes, base64url, with a prefix that says what they are.
/// Only their SHA-256 is ever stored.
public struct IssuedTokens: Sendable {
    public let accessToken: String
    public let refreshToken: String
    public let hashes: AccountCommand.SessionTokens

    /// A new pair: the access token lives `accessTokenLifetime` (15 minutes), the refresh token
    /// `refreshTokenLifetime` (30 days, rotated on every use).
    public static func issue(now: Date, policies: Policies) throws -> IssuedTokens {
        let access = "la_" + Base64URL.encode(try SecureRandom.bytes(32))
        let refresh = "lr_" + Base64URL.encode(try SecureRandom.bytes(32))
        return IssuedTokens(
            accessToken: access, refreshToken: refresh,
            hashes: .init(
                accessTokenHash: Hex.encode(tokenHash(access)), refreshTokenHash: Hex.encode(tokenHash(refresh)),
                accessExpiresAt: now.addingTimeInterval(policies.accessTokenLifetime),
                refreshExpiresAt: now.addingTimeInterval(policies.refreshTokenLifetime)))
    }

    public static func tokenHash(_ token: String) -> [UInt8] {
        SHA256.hash(Array(token.utf8))
    }
}
