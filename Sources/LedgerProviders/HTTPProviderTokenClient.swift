import AsyncHTTPClient
import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import Logging
import NIOCore

/// Apple's and Google's token endpoints over HTTP: `authorization_code` exchanges and
/// refresh-token revocations, with Apple's client secret made per call (`AppleClientSecret`)
/// and Google's from configuration. Failures are logged here, without a token or code.
public struct HTTPProviderTokenClient: ProviderTokenClient {
    /// Sign in with Apple's endpoints and credentials.
    public struct Apple: Sendable {
        public var tokenURL: String
        public var revokeURL: String
        /// nil: not configured; codes are ignored and nothing is revoked at Apple.
        public var clientSecret: AppleClientSecret?

        public init(
            tokenURL: String = "https://appleid.apple.com/auth/token", revokeURL: String = "https://appleid.apple.com/auth/revoke",
            clientSecret: AppleClientSecret?
        ) {
            self.tokenURL = tokenURL
            self.revokeURL = revokeURL
            self.clientSecret = clientSecret
        }
    }

    /// Google's endpoints and client secret.
    public struct Google: Sendable {
        public var tokenURL: String
        public var revokeURL: String
        /// nil: not configured; codes are ignored and nothing is revoked at Google.
        public var clientSecret: String?

        public init(
            tokenURL: String = "https://oauth2.googleapis.com/token", revokeURL: String = "https://oauth2.googleapis.com/revoke",
            clientSecret: String?
        ) {
            self.tokenURL = tokenURL
            self.revokeURL = revokeURL
            self.clientSecret = clientSecret
        }
    }

    let apple: Apple
    let google: Google
    let clock: any LedgerClock
    let logger: Logger
    let httpClient: HTTPClient
    /// The longest a provider may take to answer.
    static let timeout: TimeAmount = .seconds(5)

    public init(
        apple: Apple, google: Google, clock: any LedgerClock, logger: Logger = Logger(label: "ledger.provider-tokens"),
        httpClient: HTTPClient? = nil
    ) {
        self.apple = apple
        self.google = google
        self.clock = clock
        self.logger = logger
        self.httpClient = httpClient ?? .providers
    }

    public func canExchange(_ provider: IdentityProvider) -> Bool {
        switch provider {
        case .apple: return apple.clientSecret != nil
        case .google: return google.clientSecret != nil
        }
    }

    public func exchange(code: String, provider: IdentityProvider, clientID: String, subject: String) async throws -> String {
        do {
            let fields = [("grant_type", "authorization_code"), ("code", code)] + (try await credentials(provider, clientID: clientID))
            let (status, body) = try await post(provider == .apple ? apple.tokenURL : google.tokenURL, fields, provider: provider)
            guard status == 200 else {
                throw ProviderTokenError(
                    status >= 500 ? .unavailable : .rejected, provider, "the token endpoint answered \(status) \(Self.errorCode(body))")
            }
            guard let answer = try? JSONDecoder().decode(TokenAnswer.self, from: Data(body)), let refreshToken = answer.refreshToken,
                !refreshToken.isEmpty
            else { throw ProviderTokenError(.rejected, provider, "the answer carried no refresh token") }
            // The answer came straight from the provider over TLS, so its ID token's claims are
            // believed without checking its signature (OpenID Connect Core 3.1.3.7).
            guard let idToken = answer.idToken, Self.subject(ofJWT: idToken) == subject else {
                throw ProviderTokenError(.rejected, provider, "the answer's ID token is not for the user who signed in")
            }
            return refreshToken
        } catch let error as ProviderTokenError {
            logger.warning("authorization code not exchanged", metadata: ["provider": "\(provider.rawValue)", "error": "\(error.reason)"])
            throw error
        }
    }

    public func revoke(refreshToken: String, provider: IdentityProvider, clientID: String) async throws {
        let fields =
            provider == .apple
            ? [("token", refreshToken), ("token_type_hint", "refresh_token")] + (try await credentials(provider, clientID: clientID))
            : [("token", refreshToken)]
        let (status, body) = try await post(provider == .apple ? apple.revokeURL : google.revokeURL, fields, provider: provider)
        let error = Self.errorCode(body)
        // A token the provider no longer knows (revoked already, expired) is as good as revoked.
        guard status == 200 || (status == 400 && ["invalid_token", "invalid_grant"].contains(error)) else {
            throw ProviderTokenError(status >= 500 ? .unavailable : .rejected, provider, "the revoke endpoint answered \(status) \(error)")
        }
    }

    /// Apple's `client_id` and fresh `client_secret`, or Google's.
    func credentials(_ provider: IdentityProvider, clientID: String) async throws -> [(String, String)] {
        switch provider {
        case .apple:
            guard let secret = apple.clientSecret else { throw ProviderTokenError(.notConfigured, provider, "no signing key") }
            return [("client_id", clientID), ("client_secret", try await secret.make(clientID: clientID, now: clock.now()))]
        case .google:
            guard let secret = google.clientSecret else { throw ProviderTokenError(.notConfigured, provider, "no client secret") }
            return [("client_id", clientID), ("client_secret", secret)]
        }
    }

    /// POSTs a form; the status and at most 64 KiB of the answer.
    func post(_ url: String, _ fields: [(String, String)], provider: IdentityProvider) async throws -> (UInt, [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: Self.form(fields)))
        do {
            let response = try await httpClient.execute(request, timeout: Self.timeout)
            var body = try await response.body.collect(upTo: 64 << 10)
            return (response.status.code, body.readBytes(length: body.readableBytes) ?? [])
        } catch {
            throw ProviderTokenError(.unavailable, provider, "\(url) could not be reached (\(type(of: error)))")
        }
    }

    /// `application/x-www-form-urlencoded`, every byte but the unreserved ones escaped.
    static func form(_ fields: [(String, String)]) -> String {
        var unreserved = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        unreserved.insert(charactersIn: "-._~")
        return fields.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")"
        }.joined(separator: "&")
    }

    /// The OAuth `error` of an error answer (at most 40 characters of it, for the log).
    static func errorCode(_ body: [UInt8]) -> String {
        struct ErrorAnswer: Decodable { let error: String? }
        return ((try? JSONDecoder().decode(ErrorAnswer.self, from: Data(body)))?.error).map { String($0.prefix(40)) } ?? ""
    }

    /// The `sub` claim of a JWT's payload, unverified.
    static func subject(ofJWT token: String) -> String? {
        struct Claims: Decodable { let sub: String? }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])) else { return nil }
        return (try? JSONDecoder().decode(Claims.self, from: Data(bytes)))?.sub
    }

    struct TokenAnswer: Decodable {
        let refreshToken: String?
        let idToken: String?
        enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token", idToken = "id_token" }
    }
}
