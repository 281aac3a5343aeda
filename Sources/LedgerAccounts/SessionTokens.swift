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

    /// Access tokens live 15 minutes, refresh tokens 30 days (rotated on every use).
    public static let accessLifetime = Policies.standard.accessTokenLifetime
    public static let refreshLifetime = Policies.standard.refreshTokenLifetime

    public static func issue(now: Date) throws -> IssuedTokens {
        let access = "la_" + Base64URL.encode(try SecureRandom.bytes(32))
        let refresh = "lr_" + Base64URL.encode(try SecureRandom.bytes(32))
        return IssuedTokens(
            accessToken: access, refreshToken: refresh,
            hashes: .init(
                accessTokenHash: Hex.encode(tokenHash(access)), refreshTokenHash: Hex.encode(tokenHash(refresh)),
                accessExpiresAt: now.addingTimeInterval(accessLifetime),
                refreshExpiresAt: now.addingTimeInterval(refreshLifetime)))
    }

    public static func tokenHash(_ token: String) -> [UInt8] {
        SHA256.hash(Array(token.utf8))
    }
}
