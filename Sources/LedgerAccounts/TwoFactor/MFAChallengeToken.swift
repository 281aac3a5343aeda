import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// The `mfa_token` a sign-in answers with when the account has two-factor authentication on:
/// `mfa_` + base64url(account id, challenge id, 32 random bytes). The account keeps only the
/// SHA-256 of the random part (`mfa.challenge_issued`), so the token finds its account without
/// an index and proves itself in constant time.
public struct MFAChallengeToken: Sendable, Equatable {
    public let accountID: UUID
    public let challengeID: UUID
    let secret: [UInt8]

    static let prefix = "mfa_"

    /// A new token's parts and the challenge to issue with it, good for `lifetime` from `now`.
    public static func issue(linkToken: String?, now: Date, lifetime: TimeInterval) throws
        -> (secret: [UInt8], challenge: AccountCommand.NewChallenge)
    {
        let secret = try SecureRandom.bytes(32)
        return (
            secret,
            AccountCommand.NewChallenge(
                challengeID: UUID.random(), tokenHash: Hex.encode(SHA256.hash(secret)), expiresAt: now.addingTimeInterval(lifetime),
                linkToken: linkToken)
        )
    }

    public init(accountID: UUID, challengeID: UUID, secret: [UInt8]) {
        self.accountID = accountID
        self.challengeID = challengeID
        self.secret = secret
    }

    /// The token's text.
    public var text: String { Self.prefix + Base64URL.encode(accountID.bytes + challengeID.bytes + secret) }

    /// SHA-256 (hex) of the random part, as the challenge holds it.
    public var secretHash: String { Hex.encode(SHA256.hash(secret)) }

    /// The parts of a token; `mfa_expired` for anything that is not one.
    public init(parsing text: String) throws {
        guard text.hasPrefix(Self.prefix), text.utf8.count < 200, let bytes = Base64URL.decode(String(text.dropFirst(Self.prefix.count))),
            bytes.count == 64, let account = UUID(bytes: Array(bytes[0..<16])), let challenge = UUID(bytes: Array(bytes[16..<32]))
        else { throw IdentityError.mfaExpired }
        self.init(accountID: account, challengeID: challenge, secret: Array(bytes[32...]))
    }
}

/// A sign-in proved its first factor on an account with two-factor authentication on: no
/// session yet, `{mfa_required: true, mfa_token, methods}` instead.
public struct MFARequired: Error, Sendable, Equatable {
    public let token: String
    public let accountID: UUID
    public let methods: [String]

    public init(token: String, accountID: UUID, methods: [String] = ["totp", "recovery_code"]) {
        self.token = token
        self.accountID = accountID
        self.methods = methods
    }
}
