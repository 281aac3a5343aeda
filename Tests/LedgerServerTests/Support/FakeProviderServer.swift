import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import LedgerCore
import LedgerTestSupport
import NIOCore
import Testing

/// Apple's and Google's token and revoke endpoints on loopback, strict as the real ones about
/// what the service must get right: Apple's client secret must be an ES256 JWT by the team's key
/// (its `kid`), issued by the team, about the client id, for Apple, unexpired; Google's must be
/// the configured secret. A code works once and belongs to the user it was registered for.
final class FakeProviderServer: @unchecked Sendable {
    /// The Apple team's signing key, its PEM file (`LEDGER_APPLE_PRIVATE_KEY`) and ids.
    let appleKey = ES256PrivateKey()
    let appleKeyPath: String
    static let teamID = "TEAM123456"
    static let keyID = "KEY7654321"
    static let googleSecret = "google-client-secret-1"

    private let lock = NSLock()
    private var codes: [String: String] = [:]
    private var issued: [String] = []
    private var revoked: [(provider: String, token: String)] = []
    private var refused: [String] = []
    private var failures = 0
    /// The user the next answer's ID token names instead of the code's (a test of the check).
    private var answerSubject: String?
    private(set) var baseURL = ""
    /// The tests' clock: a client secret's expiry is judged by it.
    let clock: any LedgerClock

    init(clock: any LedgerClock) throws {
        self.clock = clock
        appleKeyPath = FileManager.default.temporaryDirectory.appendingPathComponent("apple-\(UUID().uuidString).p8").path
        try Data(appleKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: appleKeyPath))
    }

    /// A code the provider will exchange once, for `subject`.
    func code(for subject: String) -> String {
        let code = "c." + UUID().uuidString.lowercased()
        lock.withLock { codes[code] = subject }
        return code
    }

    /// The next `count` calls answer 503.
    func fail(_ count: Int) { lock.withLock { failures = count } }
    func answer(withSubject subject: String?) { lock.withLock { answerSubject = subject } }
    /// Refresh tokens issued, in order.
    var issuedTokens: [String] { lock.withLock { issued } }
    /// Revocations received with valid credentials, in order.
    var revocations: [(provider: String, token: String)] { lock.withLock { revoked } }
    /// Why calls were refused (bad credentials, unknown codes).
    var refusals: [String] { lock.withLock { refused } }

    private func refuse(_ reason: String, _ error: String) -> Response {
        lock.withLock { refused.append(reason) }
        return Self.json(.badRequest, ["error": error])
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return Response(
            status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: Array(data))))
    }

    static func form(_ body: ByteBuffer) -> [String: String] {
        let text = String(buffer: body)
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ") }
            guard let name = parts.first?.removingPercentEncoding else { continue }
            fields[name] = parts.count == 2 ? parts[1].removingPercentEncoding ?? "" : ""
        }
        return fields
    }

    struct SecretClaims: JWTPayload {
        let iss: IssuerClaim
        let sub: SubjectClaim
        let aud: AudienceClaim
        let iat: IssuedAtClaim
        let exp: ExpirationClaim
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// Why Apple would refuse these credentials; nil when it would take them.
    func appleCredentialProblem(_ fields: [String: String]) async -> String? {
        guard let clientID = fields["client_id"], let secret = fields["client_secret"] else { return "no client credentials" }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: appleKey.publicKey, kid: JWKIdentifier(string: Self.keyID))
        struct Header: Decodable {
            let alg: String?
            let kid: String?
        }
        guard let encoded = secret.split(separator: ".").first, let bytes = Base64URL.decode(String(encoded)),
            let header = try? JSONDecoder().decode(Header.self, from: Data(bytes)), header.kid == Self.keyID, header.alg == "ES256"
        else {
            return "the client secret's header is not ES256 with the team's key id"
        }
        guard let claims = try? await keys.verify(secret, as: SecretClaims.self) else { return "the client secret does not verify" }
        guard claims.iss.value == Self.teamID, claims.sub.value == clientID, claims.aud.value == ["https://appleid.apple.com"] else {
            return "the client secret's claims are wrong"
        }
        // Apple takes secrets that live at most six months, and none that has expired.
        let now = clock.now()
        guard claims.exp.value > now, claims.iat.value <= now.addingTimeInterval(60),
            claims.exp.value.timeIntervalSince(claims.iat.value) <= 15_777_000
        else { return "the client secret has expired or lives too long" }
        return nil
    }

    func handle(_ provider: String, _ endpoint: String, _ fields: [String: String]) async -> Response {
        if lock.withLock({
            failures > 0
                ? {
                    failures -= 1
                    return true
                }() : false
        }) {
            return Self.json(.serviceUnavailable, ["error": "temporarily_unavailable"])
        }
        if provider == "apple" {
            if let problem = await appleCredentialProblem(fields) { return refuse(problem, "invalid_client") }
        } else if endpoint == "token", fields["client_secret"] != Self.googleSecret || fields["client_id"] == nil {
            return refuse("wrong Google client secret", "invalid_client")
        }
        if endpoint == "revoke" {
            guard let token = fields["token"] else { return refuse("no token to revoke", "invalid_request") }
            lock.withLock { revoked.append((provider, token)) }
            return Response(status: .ok)
        }
        guard fields["grant_type"] == "authorization_code", let code = fields["code"],
            let subject = lock.withLock({ codes.removeValue(forKey: code) })
        else { return refuse("unknown or used code", "invalid_grant") }
        let refreshToken = "r.\(provider).\(UUID().uuidString.lowercased())"
        let named = lock.withLock {
            issued.append(refreshToken)
            return answerSubject ?? subject
        }
        let claims = Base64URL.encode(Array(#"{"iss":"fake","sub":"\#(named)"}"#.utf8))
        return Self.json(
            .ok,
            [
                "access_token": "a.\(UUID().uuidString)", "token_type": "Bearer", "expires_in": 3600, "refresh_token": refreshToken,
                "id_token": "eyJhbGciOiJub25lIn0.\(claims).c2ln",
            ])
    }

    /// Runs `body` with the server listening.
    func serve(_ body: () async throws -> Void) async throws {
        let router = Router()
        for provider in ["apple", "google"] {
            for endpoint in ["token", "revoke"] {
                router.post("/\(provider)/\(endpoint)") { request, _ -> Response in
                    await self.handle(provider, endpoint, Self.form(try await request.body.collect(upTo: 1 << 16)))
                }
            }
        }
        try await withLoopbackServer(router, label: "fake-provider") { port in
            baseURL = "http://127.0.0.1:\(port)"
            try await body()
        }
    }
}
