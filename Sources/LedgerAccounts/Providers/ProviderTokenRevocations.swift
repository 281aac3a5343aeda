import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// A refresh token the account gives up (`provider.token_revoked`) is revoked at the provider
/// through the outbox, so the revocation is written in the transaction that gave the token up
/// and is retried until the provider accepts it. The message carries the token sealed with
/// AES-256-GCM under a key derived from the master key (`KeyLabel.providerTokenRevocation`): the
/// outbox never holds it in the clear, the dispatcher of any instance opens it, and a delivered,
/// failed or purged message keeps nothing.
public struct ProviderTokenRevocations: Sendable {
    let key: [UInt8]

    /// The outbox channel and template of a revocation.
    public static let channel = OutboxMessage.Channel.provider
    public static let template = "revoke_token"
    static let associatedData = Array("account-ledger/provider-token-revocation/1".utf8)

    public init(masterKey: MasterKey) {
        self.key = masterKey.derivedKey(label: KeyLabel.providerTokenRevocation)
    }

    /// A revocation to send: the token, and the app it was issued to.
    public struct Revocation: Sendable, Equatable {
        public let provider: IdentityProvider
        public let clientID: String
        public let refreshToken: String
    }

    private struct Sealed: Codable {
        let clientID: String
        let refreshToken: String
        enum CodingKeys: String, CodingKey { case clientID = "client_id", refreshToken = "refresh_token" }
    }

    /// The revocations `events` imply: one for each token they give up, read from the state
    /// before them, and one parked for each token a second-factor challenge holds (due at the
    /// challenge's end, withdrawn when the challenge is passed and the token kept).
    public func messages(for events: [AccountEvent], before state: AccountState) throws -> [OutboxMessage] {
        try events.compactMap { event in
            switch event {
            case .providerTokenRevoked(let revoked):
                guard let token = state.providerTokens[revoked.provider] else { return nil }
                return try message(revoking: token)
            case .mfaChallengeIssued(let issued):
                guard let token = issued.providerToken, let parked = issued.parkedRevocationID else { return nil }
                return try message(revoking: token, id: parked, notBefore: issued.expiresAt.addingTimeInterval(Self.parkingMargin))
            default:
                return nil
            }
        }
    }

    /// How long after a sign-in's end (a challenge's, a `link_token`'s) a revocation parked for
    /// it goes: a completion at the last moment commits first.
    public static let parkingMargin: TimeInterval = 60

    /// A revocation message for a token (due at `notBefore`, else at once); the message id is
    /// bound into the seal, so a token cannot be moved to another row. A parked one (with
    /// `notBefore`) names its grant (`details.grant`): any token kept for that grant withdraws it.
    public func message(revoking token: AccountState.ProviderToken, id: UUID = UUID.random(), notBefore: Date? = nil) throws
        -> OutboxMessage
    {
        let plaintext = try JSONEncoder().encode(Sealed(clientID: token.clientID, refreshToken: token.refreshToken))
        return OutboxMessage(
            id: id, channel: Self.channel, to: token.provider.rawValue, template: Self.template,
            token: try AESGCM.sealText(key: key, plaintext: Array(plaintext), additionalData: Self.associatedData + id.bytes),
            details: notBefore == nil ? nil : [Self.grantDetail: grant(of: token)], notBefore: notBefore)
    }

    /// The detail naming a parked revocation's grant.
    public static let grantDetail = "grant"

    /// A keyed hash of the grant a token belongs to (the provider user and the app): revoking
    /// any of its tokens ends the person's whole consent to the app, so a parked revocation must
    /// not go once a later sign-in kept a token of the same grant.
    public func grant(of token: AccountState.ProviderToken) -> String {
        Hex.encode(
            HMACSHA256.authenticate(key: key, message: Array("grant:\(token.provider.rawValue):\(token.subject):\(token.clientID)".utf8)))
    }

    /// The token a revocation message carries; nil for a message that is not one, or whose
    /// token was sealed under another key or altered.
    public func open(_ message: OutboxMessage) -> Revocation? {
        guard message.channel == Self.channel, message.template == Self.template,
            let provider = IdentityProvider(rawValue: message.to), let text = message.token,
            let plaintext = AESGCM.openText(text, key: key, additionalData: Self.associatedData + message.id.bytes),
            let fields = try? JSONDecoder().decode(Sealed.self, from: Data(plaintext))
        else { return nil }
        return Revocation(provider: provider, clientID: fields.clientID, refreshToken: fields.refreshToken)
    }
}
