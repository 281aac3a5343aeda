import Foundation
import HummingbirdTesting
import LedgerApp
import LedgerTestSupport
import Testing

/// `amr` says how the session's sign-in went, two factors included.
@Suite("HTTP: JWT access tokens' amr")
struct JWTAccessTokenMethodsTests {
    @Test("a password then a TOTP code is amr [pwd, otp, mfa], in the JWT of the sign-in and of every refresh")
    func twoFactors() async throws {
        let twoFactor = TwoFactorEndpointTests()
        let jwt: @Sendable (inout LedgerConfiguration) -> Void = { JWTAccessTokenTests.jwt(&$0) }
        try await twoFactor.withApp(configure: jwt) { client, providers in
            let db = providers.db
            let (access, secret) = try await twoFactor.signUpWithTOTP(client, db, email: "ana@example.com")
            #expect(try JWTAccessTokenTests.parts(access).claims["amr"] as? [String] == ["pwd"])
            db.clock.advance(by: 30)
            let login = try await call(client, .post, "/auth/email/login", ["email": "ana@example.com", "password": "violet-harbor-91"])
            let verified = try await twoFactor.verify(client, try twoFactor.mfaToken(login), code: try twoFactor.code(secret, db))
            let signedIn = try #require(verified.string("access_token"))
            #expect(try JWTAccessTokenTests.parts(signedIn).claims["amr"] as? [String] == ["pwd", "otp", "mfa"])
            let refreshed = try await call(
                client, .post, "/auth/token/refresh", ["refresh_token": try #require(verified.string("refresh_token"))])
            let renewed = try #require(refreshed.string("access_token"))
            #expect(try JWTAccessTokenTests.parts(renewed).claims["amr"] as? [String] == ["pwd", "otp", "mfa"])
            #expect(
                try JWTAccessTokenTests.parts(renewed).claims["auth_time"] as? Int
                    == JWTAccessTokenTests.parts(signedIn).claims["auth_time"] as? Int)
        }
    }

    @Test("a verification link's session is amr [email]")
    func emailLink() async throws {
        let twoFactor = TwoFactorEndpointTests()
        let jwt: @Sendable (inout LedgerConfiguration) -> Void = { JWTAccessTokenTests.jwt(&$0) }
        try await twoFactor.withApp(configure: jwt) { client, providers in
            let (_, device) = try await LinkSignInTests().signUpDevice(client)
            let token = try await outboxToken(providers.db, template: "verify_email")
            let verified = try await call(
                client, .post, "/auth/email/verify", ["token": token], headers: LinkSignInTests().onDevice(device))
            let access = try #require((verified.body["session"] as? [String: Any])?["access_token"] as? String)
            #expect(try JWTAccessTokenTests.parts(access).claims["amr"] as? [String] == ["email"])
        }
    }
}
