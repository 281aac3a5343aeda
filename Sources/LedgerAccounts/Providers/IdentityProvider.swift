import Foundation
import LedgerIdentity

/// Verifies Apple and Google ID tokens (signature, issuer, audience, expiry, nonce).
public protocol IdentityTokenVerifier: Sendable {
    /// The token's identity, or `InvalidIdentityToken` for anything that does not verify.
    func verify(_ idToken: String, provider: IdentityProvider, nonce: String?) async throws -> ProviderIdentity
}

/// An ID token that does not verify; the reason goes to the log, never to the client.
public struct InvalidIdentityToken: Error, Sendable, CustomStringConvertible {
    public let reason: String
    /// The token could not be judged: the provider is not configured, or its JWKS unreadable.
    public let isUnavailable: Bool
    public init(_ reason: String, unavailable: Bool = false) {
        self.reason = reason
        self.isUnavailable = unavailable
    }
    public var description: String { "invalid identity token: \(reason)" }
}

/// What a verified ID token says about its user.
public struct ProviderIdentity: Sendable, Equatable {
    public let provider: IdentityProvider
    /// The provider's stable user id (`sub`).
    public let subject: String
    public let email: String?
    /// The provider vouches for the address.
    public let emailVerified: Bool
    /// An Apple private-relay address (`…@privaterelay.appleid.com`): never linked by email.
    public let isPrivateRelay: Bool
    /// The token's `nonce` claim, as carried (the app's nonce, or its SHA-256 in hex).
    public let nonce: String?
    /// The token's `iat`.
    public let issuedAt: Date?
    /// The app's client id the token was issued to (its `aud` among the accepted ones): an
    /// authorization code from the same sign-in is exchanged for it.
    public let audience: String?

    public init(
        provider: IdentityProvider, subject: String, email: String?, emailVerified: Bool, isPrivateRelay: Bool,
        nonce: String? = nil, issuedAt: Date? = nil, audience: String? = nil
    ) {
        self.audience = audience
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateRelay = isPrivateRelay
        self.nonce = nonce
        self.issuedAt = issuedAt
    }
}
