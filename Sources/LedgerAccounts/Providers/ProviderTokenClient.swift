import Foundation
import LedgerIdentity

/// The providers' token endpoints: an app's authorization code exchanged for a refresh token,
/// and a refresh token revoked (docs/architecture.md "Provider tokens").
public protocol ProviderTokenClient: Sendable {
    /// Whether the service holds `provider`'s credentials (Apple's signing key, Google's client
    /// secret); without them a code is not exchanged and nothing can be revoked there.
    func canExchange(_ provider: IdentityProvider) -> Bool

    /// The refresh token for `code`, issued to `clientID` for the provider user `subject` (the
    /// ID token in the provider's answer must name the same user); `ProviderTokenError`
    /// otherwise, logged by the client.
    func exchange(code: String, provider: IdentityProvider, clientID: String, subject: String) async throws -> String

    /// Revokes a refresh token at the provider; throws when the provider did not accept it.
    func revoke(refreshToken: String, provider: IdentityProvider, clientID: String) async throws
}

/// A code exchange or a revocation that did not go through; `reason` is for the log and names
/// no token.
public struct ProviderTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The provider refused the code (used, expired, another app's), or the answer was not a
        /// token for the expected user.
        public static let rejected = Code("rejected")
        /// The provider could not be reached, or answered with a server error.
        public static let unavailable = Code("unavailable")
        /// The service holds no credentials for the provider.
        public static let notConfigured = Code("not_configured")
    }

    public let code: Code
    public let provider: IdentityProvider
    public let reason: String

    public init(_ code: Code, _ provider: IdentityProvider, _ reason: String) {
        self.code = code
        self.provider = provider
        self.reason = reason
    }

    public var description: String { "\(provider.rawValue) token endpoint: \(code): \(reason)" }
}

/// A client for services without provider credentials: no code is exchanged, no revocation goes out.
public struct UnconfiguredProviderTokenClient: ProviderTokenClient {
    public init() {}

    public func canExchange(_ provider: IdentityProvider) -> Bool { false }

    public func exchange(code: String, provider: IdentityProvider, clientID: String, subject: String) async throws -> String {
        throw ProviderTokenError(.notConfigured, provider, "no credentials configured")
    }

    public func revoke(refreshToken: String, provider: IdentityProvider, clientID: String) async throws {
        throw ProviderTokenError(.notConfigured, provider, "no credentials configured")
    }
}
