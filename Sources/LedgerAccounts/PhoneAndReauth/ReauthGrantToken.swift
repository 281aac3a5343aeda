import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// A "Verify it's you" grant as the client receives it: the `X-Reauth-Token` value and when
/// it stops working. Only the token's SHA-256 is stored.
public struct ReauthGrantToken: Sendable, Equatable {
    public let token: String
    public let expiresAt: Date

    /// A fresh token and the command that records its grant.
    static func issue(method: ReauthMethod, lifetime: TimeInterval) throws -> (token: String, grant: AccountCommand.NewGrant) {
        let token = "lg_" + Base64URL.encode(try SecureRandom.bytes(32))
        return (token, .init(grantID: UUID.random(), method: method, tokenHash: hash(token), lifetime: lifetime))
    }

    /// The hex SHA-256 a presented token is looked up by.
    public static func hash(_ token: String) -> String {
        Hex.encode(SHA256.hash(Array(token.utf8)))
    }

    /// The token of a grant just recorded in `state`.
    init(token: String, grantID: UUID, in state: AccountState) {
        self.token = token
        self.expiresAt = state.reauthGrants[grantID]?.expiresAt ?? .distantPast
    }
}
