import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerTestSupport
import Testing

@testable import LedgerProviders

@Suite("Apple and Google ID tokens")
struct IdentityTokenTests {
    let clock = ManualClock(Date())

    func verifier(_ apple: TestIdentityIssuer, clientIDs: [String]? = nil) -> JWKSIdentityTokenVerifier {
        JWKSIdentityTokenVerifier(
            apple: .apple(jwks: apple.jwksPath, clientIDs: clientIDs ?? [apple.audience]),
            google: .google(jwks: apple.jwksPath, clientIDs: ["google-client"]), clock: clock,
            notificationMaxAge: Policies.standard.appleNotificationMaxAge)
    }

    func apple() async throws -> TestIdentityIssuer {
        try await TestIdentityIssuer(issuer: "https://appleid.apple.com", audience: "fit.321.app")
    }

    func expectInvalid(_ verifier: JWKSIdentityTokenVerifier, _ token: String, provider: IdentityProvider = .apple, nonce: String? = nil)
        async
    {
        await #expect(throws: InvalidIdentityToken.self) { try await verifier.verify(token, provider: provider, nonce: nonce) }
    }

    @Test("good RS256 and ES256 tokens verify and say who, which address, and whether it is verified")
    func good() async throws {
        let issuer = try await apple()
        let verifier = verifier(issuer)
        let rsa = try await verifier.verify(
            try await issuer.token(subject: "001.apple", email: "ana@example.com", emailVerified: true), provider: .apple, nonce: nil)
        #expect(
            rsa
                == ProviderIdentity(
                    provider: .apple, subject: "001.apple", email: "ana@example.com", emailVerified: true, isPrivateRelay: false,
                    nonce: nil,
                    issuedAt: Date(timeIntervalSince1970: rsa.issuedAt?.timeIntervalSince1970.rounded(.down) ?? 0),
                    audience: issuer.audience))
        #expect(rsa.issuedAt != nil)
        let ec = try await verifier.verify(
            try await issuer.token(subject: "002", email: "x1@privaterelay.appleid.com", keyID: TestIdentityIssuer.ecKeyID),
            provider: .apple, nonce: nil)
        #expect(ec.subject == "002" && ec.isPrivateRelay && !ec.emailVerified)
    }

    @Test("expired (beyond a minute of leeway), wrong audience, wrong issuer, and no configured client ids are refused")
    func claims() async throws {
        let issuer = try await apple()
        let verifier = verifier(issuer)
        _ = try await verifier.verify(
            try await issuer.token(subject: "s", expires: clock.now().addingTimeInterval(-30)), provider: .apple, nonce: nil)
        await expectInvalid(verifier, try await issuer.token(subject: "s", expires: clock.now().addingTimeInterval(-61)))
        await expectInvalid(verifier, try await issuer.token(subject: "s", audience: "someone.else"))
        await expectInvalid(verifier, try await issuer.token(subject: "s", issuer: "https://accounts.google.com"))
        await expectInvalid(verifier, try await issuer.token(subject: "s", issuedAt: clock.now().addingTimeInterval(3600)))
        // An Apple token is not a Google token.
        await expectInvalid(verifier, try await issuer.token(subject: "s"), provider: .google)
        await expectInvalid(self.verifier(issuer, clientIDs: []), try await issuer.token(subject: "s"))
    }

    @Test("a tampered signature, a re-signed payload, and alg none are refused")
    func forgeries() async throws {
        let issuer = try await apple()
        let verifier = verifier(issuer)
        let token = try await issuer.token(subject: "s", email: "ana@example.com", emailVerified: true)
        let parts = token.split(separator: ".").map(String.init)
        var signature = Array(parts[2])
        signature[10] = signature[10] == "A" ? "B" : "A"
        await expectInvalid(verifier, parts[0] + "." + parts[1] + "." + String(signature))
        let otherPayload = try await issuer.token(subject: "someone-else").split(separator: ".").map(String.init)[1]
        await expectInvalid(verifier, parts[0] + "." + otherPayload + "." + parts[2])
        let none = Base64URL.encode(Array(#"{"alg":"none","kid":"rsa-1","typ":"JWT"}"#.utf8))
        await expectInvalid(verifier, none + "." + parts[1] + ".")
        let hs256 = Base64URL.encode(Array(#"{"alg":"HS256","kid":"rsa-1","typ":"JWT"}"#.utf8))
        await expectInvalid(verifier, hs256 + "." + parts[1] + "." + parts[2])
        await expectInvalid(verifier, "not-a-jwt")
    }

    @Test("an unknown key id re-reads the JWKS, at most once a minute: a rotated key works after that")
    func rotation() async throws {
        let issuer = try await apple()
        try issuer.publish([TestIdentityIssuer.rsaKeyID])
        let verifier = verifier(issuer)
        _ = try await verifier.verify(try await issuer.token(subject: "s"), provider: .apple, nonce: nil)
        let rotated = try await issuer.token(subject: "s", keyID: TestIdentityIssuer.ecKeyID)
        await expectInvalid(verifier, rotated)
        try issuer.publish([TestIdentityIssuer.rsaKeyID, TestIdentityIssuer.ecKeyID])
        clock.advance(by: 30)
        await expectInvalid(verifier, rotated)  // read 30 s ago: not again yet
        clock.advance(by: 30)
        _ = try await verifier.verify(rotated, provider: .apple, nonce: nil)
    }

    @Test("the nonce must match when the app sends one: raw (Google) or its SHA-256 (Apple)")
    func nonce() async throws {
        let issuer = try await apple()
        let verifier = verifier(issuer)
        let hashed = Hex.encode(LedgerCrypto.SHA256.hash(Array("raw-nonce-1".utf8)))
        _ = try await verifier.verify(try await issuer.token(subject: "s", nonce: hashed), provider: .apple, nonce: "raw-nonce-1")
        _ = try await verifier.verify(try await issuer.token(subject: "s", nonce: "raw-nonce-1"), provider: .apple, nonce: "raw-nonce-1")
        await expectInvalid(verifier, try await issuer.token(subject: "s", nonce: "other"), nonce: "raw-nonce-1")
        await expectInvalid(verifier, try await issuer.token(subject: "s"), nonce: "raw-nonce-1")
    }

    @Test("Cache-Control: max-age is how long the keys are kept; no-store and no-cache mean not at all; none says nothing")
    func cacheControl() {
        #expect(JWKSKeySet.maxAge(cacheControl: "public, max-age=21600, must-revalidate") == 21600)
        #expect(JWKSKeySet.maxAge(cacheControl: "MAX-AGE=\"60\"") == 60)
        #expect(JWKSKeySet.maxAge(cacheControl: "max-age=60, no-cache") == 0)
        #expect(JWKSKeySet.maxAge(cacheControl: "no-store") == 0)
        #expect(JWKSKeySet.maxAge(cacheControl: "max-age=-5") == nil)
        #expect(JWKSKeySet.maxAge(cacheControl: "max-age=soon") == nil)
        #expect(JWKSKeySet.maxAge(cacheControl: "") == nil)
    }

    /// A token signed with the EC key, issued now, valid for ten minutes.
    func freshToken(_ issuer: TestIdentityIssuer) async throws -> String {
        try await issuer.token(
            subject: "s", expires: clock.now().addingTimeInterval(600), issuedAt: clock.now(), keyID: TestIdentityIssuer.ecKeyID)
    }

    @Test("a file's keys are read again after an hour: a key removed from the file stops verifying")
    func fileKeysExpire() async throws {
        let issuer = try await apple()
        let verifier = verifier(issuer)
        func token() async throws -> String { try await freshToken(issuer) }
        _ = try await verifier.verify(try await token(), provider: .apple, nonce: nil)
        try issuer.publish([TestIdentityIssuer.rsaKeyID])
        clock.advance(by: 3599)
        _ = try await verifier.verify(try await token(), provider: .apple, nonce: nil)
        clock.advance(by: 2)
        await expectInvalid(verifier, try await token())
    }

    @Test("keys past their age are forgotten when the new answer does not parse, not served for the minute after")
    func unparseableKeysExpire() async throws {
        let issuer = try await apple()
        let verifier = verifier(issuer)
        func token() async throws -> String { try await freshToken(issuer) }
        _ = try await verifier.verify(try await token(), provider: .apple, nonce: nil)
        try Data("<html>maintenance</html>".utf8).write(to: URL(fileURLWithPath: issuer.jwksPath))
        clock.advance(by: 3601)
        await expectInvalid(verifier, try await token())
        clock.advance(by: 30)
        await expectInvalid(verifier, try await token())
        // A good answer a minute later brings them back.
        try issuer.publish([TestIdentityIssuer.rsaKeyID, TestIdentityIssuer.ecKeyID])
        clock.advance(by: 31)
        _ = try await verifier.verify(try await token(), provider: .apple, nonce: nil)
    }
}

@Suite("Development identity issuer")
struct DevelopmentIdentityIssuerTests {
    @Test("its tokens verify against the JWKS it writes, for Apple and Google; its key is reused")
    func tokensVerify() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dev-idp-\(UUID().uuidString)")
        let keyPath = directory.appendingPathComponent("key.pem").path
        let jwksPath = directory.appendingPathComponent("jwks.json").path
        let issuer = try DevelopmentIdentityIssuer(keyPath: keyPath, jwksPath: jwksPath)
        let verifier = JWKSIdentityTokenVerifier(
            apple: .apple(jwks: jwksPath, clientIDs: [DevelopmentIdentityIssuer.audience]),
            google: .google(jwks: jwksPath, clientIDs: [DevelopmentIdentityIssuer.audience]), clock: SystemClock(),
            notificationMaxAge: Policies.standard.appleNotificationMaxAge)
        let apple = try await verifier.verify(
            try await issuer.token(provider: .apple, subject: "dev-apple-1", email: "dev@example.com", emailVerified: true, nonce: "n1"),
            provider: .apple, nonce: "n1")
        #expect(apple.subject == "dev-apple-1" && apple.email == "dev@example.com" && apple.emailVerified)
        let google = try await verifier.verify(
            try await issuer.token(provider: .google, subject: "dev-google-1", email: nil, emailVerified: false, nonce: nil),
            provider: .google, nonce: nil)
        #expect(google.subject == "dev-google-1" && google.email == nil)
        // A second issuer on the same files signs with the same key.
        let again = try DevelopmentIdentityIssuer(keyPath: keyPath, jwksPath: jwksPath)
        _ = try await verifier.verify(
            try await again.token(provider: .apple, subject: "dev-apple-2", email: nil, emailVerified: false, nonce: nil),
            provider: .apple, nonce: nil)
        // An Apple token is not a Google token.
        await #expect(throws: InvalidIdentityToken.self) {
            try await verifier.verify(
                try await issuer.token(provider: .apple, subject: "x", email: nil, emailVerified: false, nonce: nil),
                provider: .google, nonce: nil)
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
