import Foundation
import JWTKit
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Verifies Apple and Google ID tokens against their JWKS: the signature (RS256 or ES256 only,
/// by a key the provider publishes), the issuer, the audience (this app's client ids), the
/// expiry with a minute of leeway, and the nonce when the app sends one.
public struct JWKSIdentityTokenVerifier: IdentityTokenVerifier {
    /// One provider's settings.
    public struct Provider: Sendable {
        /// A JWKS URL or file path.
        public var jwks: String
        public var issuers: [String]
        /// Accepted `aud` values; none configured means every token is refused.
        public var clientIDs: [String]

        public init(jwks: String, issuers: [String], clientIDs: [String]) {
            self.jwks = jwks
            self.issuers = issuers
            self.clientIDs = clientIDs
        }

        public static func apple(jwks: String, clientIDs: [String]) -> Provider {
            Provider(jwks: jwks, issuers: ["https://appleid.apple.com"], clientIDs: clientIDs)
        }

        public static func google(jwks: String, clientIDs: [String]) -> Provider {
            Provider(jwks: jwks, issuers: ["https://accounts.google.com", "accounts.google.com"], clientIDs: clientIDs)
        }
    }

    let providers: [IdentityProvider: (settings: Provider, keys: JWKSKeySet)]
    let clock: any LedgerClock
    /// Clock skew allowed on `exp` and `iat`.
    public static let leeway: TimeInterval = 60
    static let algorithms: Set<String> = ["RS256", "ES256"]

    /// The oldest Apple server-to-server notification (by `iat`) acted on (`appleNotificationMaxAge`).
    let notificationMaxAge: TimeInterval

    public init(apple: Provider, google: Provider, clock: any LedgerClock, notificationMaxAge: TimeInterval) {
        self.clock = clock
        self.notificationMaxAge = notificationMaxAge
        self.providers = [
            .apple: (apple, JWKSKeySet(source: apple.jwks, clock: clock)),
            .google: (google, JWKSKeySet(source: google.jwks, clock: clock)),
        ]
    }

    /// The claims of a token signed by a key the provider publishes, from its issuer, for one of
    /// this app's client ids; the reason it is refused otherwise.
    func verifiedClaims<Claims: ProviderClaims>(_ token: String, provider: IdentityProvider, as: Claims.Type)
        async throws(InvalidIdentityToken) -> Claims
    {
        // What is not a signed token at all is refused as such, whatever the configuration.
        let header = try Self.header(of: token)
        guard let algorithm = header.alg, Self.algorithms.contains(algorithm) else {
            throw InvalidIdentityToken("algorithm \(header.alg ?? "none") is not accepted")
        }
        guard let keyID = header.kid else { throw InvalidIdentityToken("no key id") }
        guard let (settings, keySet) = providers[provider], !settings.clientIDs.isEmpty else {
            throw InvalidIdentityToken("no client ids configured for \(provider.rawValue)", unavailable: true)
        }
        let keys: JWTKeyCollection?
        do {
            keys = try await keySet.keys(holding: keyID)
        } catch {
            throw InvalidIdentityToken("the \(provider.rawValue) JWKS could not be read: \(error)", unavailable: true)
        }
        guard let keys else { throw InvalidIdentityToken("unknown key id") }
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self)
        } catch {
            throw InvalidIdentityToken("signature or claims do not verify")
        }
        guard settings.issuers.contains(claims.iss.value) else { throw InvalidIdentityToken("wrong issuer") }
        guard claims.aud.value.contains(where: settings.clientIDs.contains) else { throw InvalidIdentityToken("wrong audience") }
        if let issuedAt = claims.iat?.value, issuedAt > clock.now().addingTimeInterval(Self.leeway) {
            throw InvalidIdentityToken("issued in the future")
        }
        return claims
    }

    public func verify(_ idToken: String, provider: IdentityProvider, nonce: String?) async throws -> ProviderIdentity {
        let claims = try await verifiedClaims(idToken, provider: provider, as: IdentityClaims.self)
        let now = clock.now()
        guard claims.exp.value.addingTimeInterval(Self.leeway) > now else { throw InvalidIdentityToken("expired") }
        if let nonce {
            // Apple carries the SHA-256 (hex) of the app's raw nonce; Google the nonce itself.
            let hashed = Hex.encode(SHA256.hash(Array(nonce.utf8)))
            guard let carried = claims.nonce, carried == nonce || carried == hashed else {
                throw InvalidIdentityToken("nonce mismatch")
            }
        }
        let email = claims.email?.trimmingCharacters(in: .whitespaces)
        let relay = claims.isPrivateEmail?.value == true || email?.lowercased().hasSuffix("@privaterelay.appleid.com") == true
        return ProviderIdentity(
            provider: provider, subject: claims.sub.value, email: email?.isEmpty == false ? email : nil,
            emailVerified: claims.emailVerified?.value == true, isPrivateRelay: relay, nonce: claims.nonce,
            issuedAt: claims.iat?.value, audience: claims.aud.value.first(where: (providers[provider]?.settings.clientIDs ?? []).contains))
    }

    struct Header: Decodable {
        let alg: String?
        let kid: String?
    }

    static func header(of token: String) throws(InvalidIdentityToken) -> Header {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode(Header.self, from: Data(bytes))
        else { throw InvalidIdentityToken("not a JWT") }
        return header
    }
}

/// What every token from a provider carries and `verifiedClaims` checks.
protocol ProviderClaims: JWTPayload {
    var iss: IssuerClaim { get }
    var aud: AudienceClaim { get }
    var iat: IssuedAtClaim? { get }
}

/// The claims read from Apple's and Google's ID tokens. `verify` is empty on purpose: the
/// claims are checked against the service's clock, not the system's.
struct IdentityClaims: ProviderClaims {
    let iss: IssuerClaim
    let sub: SubjectClaim
    let aud: AudienceClaim
    let exp: ExpirationClaim
    let iat: IssuedAtClaim?
    let nonce: String?
    let email: String?
    let emailVerified: BoolClaim?
    let isPrivateEmail: BoolClaim?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, email
        case emailVerified = "email_verified", isPrivateEmail = "is_private_email"
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
