import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// A provider sign-in that found an account it may not join on its own waits in a `link_token`:
/// the identity (provider, subject, email), the account that holds the email, the provider's
/// refresh token when the sign-in fetched one, and its expiry, sealed with AES-256-GCM under a key
/// derived from the master key. Nothing is stored, so any instance opens it and nothing personal
/// outlives the token. It links only to that account,
/// while it still holds that email: a token can never carry an identity into another account.
/// Replaying one can only link the same identity again (nothing changes).
public struct ProviderLinkTokens: Sendable {
    let key: [UInt8]
    public let lifetime: TimeInterval

    static let prefix = "lt_"
    static let associatedData = Array("account-ledger/provider-link-token/1".utf8)

    public init(key: [UInt8], lifetime: TimeInterval) {
        self.key = key
        self.lifetime = lifetime
    }

    /// The sealed fields (short names: the token travels in every retry of a sign-in).
    private struct Sealed: Codable {
        let p: String
        let s: String
        let e: String?
        let v: Bool
        let h: UUID
        let x: Int64
        /// The fetched refresh token and the client id it was issued to, and its parked revocation.
        let t: String?
        let c: String?
        let r: UUID?
    }

    /// An identity waiting for the account that holds its email.
    public struct WaitingLink: Sendable, Equatable {
        public let identity: AccountCommand.ProviderIdentityClaim
        /// The only account it may join.
        public let holder: UUID
        /// The provider's refresh token the sign-in fetched, kept once the identity is linked,
        /// and the revocation parked for it meanwhile (withdrawn then).
        public let token: AccountState.ProviderToken?
        public let parkedRevocation: UUID?
    }

    /// A token for `identity` (and the refresh token its sign-in fetched) waiting for `holder`,
    /// good for `lifetime` from `now`.
    public func issue(
        _ identity: AccountCommand.ProviderIdentityClaim, holder: UUID, token: AccountState.ProviderToken? = nil,
        parkedRevocation: UUID? = nil, now: Date
    ) throws -> String {
        let sealed = Sealed(
            p: identity.provider.rawValue, s: identity.subject, e: identity.email, v: identity.emailVerified, h: holder,
            x: Int64(now.addingTimeInterval(lifetime).timeIntervalSince1970.rounded(.up)), t: token?.refreshToken, c: token?.clientID,
            r: parkedRevocation)
        return Self.prefix
            + (try AESGCM.sealText(key: key, plaintext: Array(try JSONEncoder().encode(sealed)), additionalData: Self.associatedData))
    }

    /// The waiting identity; `410 link_expired` for a token that is past its time, altered,
    /// sealed under another key, or not a token at all.
    public func open(_ token: String, now: Date) throws -> WaitingLink {
        guard token.hasPrefix(Self.prefix), token.utf8.count < 4096,
            let plaintext = AESGCM.openText(token.dropFirst(Self.prefix.count), key: key, additionalData: Self.associatedData),
            let sealed = try? JSONDecoder().decode(Sealed.self, from: Data(plaintext)),
            let provider = IdentityProvider(rawValue: sealed.p),
            Double(sealed.x) > now.timeIntervalSince1970
        else { throw Self.expired }
        var fetched: AccountState.ProviderToken?
        if let refreshToken = sealed.t, let clientID = sealed.c {
            fetched = AccountState.ProviderToken(provider: provider, subject: sealed.s, clientID: clientID, refreshToken: refreshToken)
        }
        return WaitingLink(
            identity: AccountCommand.ProviderIdentityClaim(provider: provider, subject: sealed.s, email: sealed.e, emailVerified: sealed.v),
            holder: sealed.h, token: fetched, parkedRevocation: sealed.r)
    }

    static let expired = IdentityError(.linkExpired, "This sign-in link has expired. Sign in with Apple or Google again.")

    /// The sign-in proved another account than the one holding the identity's email (or that
    /// account's email has changed since).
    static let mismatch = IdentityError(
        .linkMismatch, "This sign-in is for another account. Sign in to the account that has this email to connect it.")
}

/// `409 link_required`: the provider's email belongs to an account that cannot be joined
/// automatically (it never verified the address). No account was created; signing in to that
/// account with `linkToken` links the provider to it.
public struct LinkRequired: Error, Sendable, Equatable {
    public let linkToken: String
    /// The account's email with most of it hidden: `a•••@example.com`.
    public let emailHint: String
    /// How that account signs in.
    public let methods: [SignInMethod]
    public let provider: IdentityProvider
}
