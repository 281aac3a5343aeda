import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Email sign-up and sign-in, token refresh, logout, and the signed-in account's views
/// (docs/architecture.md "Accounts and sessions"). Translates HTTP to `AccountService` and back.
public struct AuthController: Sendable {
    let accounts: AccountService
    /// Links the provider identity a `link_token` carries to the account a sign-in proves.
    let providers: ProviderService
    /// Where `/me`'s `avatar_url` points.
    let avatars: AvatarURLs

    public init(accounts: AccountService, providers: ProviderService, avatars: AvatarURLs) {
        self.accounts = accounts
        self.providers = providers
        self.avatars = avatars
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        routes.post("/auth/email/signup") { request, context in
            let body = try await request.decodeJSON(SignUpRequest.self, context: context)
            let session = try await ErrorTranslation.singleRule {
                try await accounts.signUp(
                    email: body.email, password: body.password, displayName: body.displayName, handle: body.handle,
                    device: request.deviceLabel, client: context.client, deviceToken: request.deviceToken,
                    locale: request.locale)
            }
            return JSONResponse(.created, SessionBody(session))
        }
        routes.post("/auth/email/login") { request, context in
            let body = try await request.decodeJSON(LoginRequest.self, context: context)
            let waiting = try body.linkToken.map(providers.waitingIdentity)
            return try await JSONResponse.orMFARequired {
                let session = try await accounts.signIn(
                    email: body.email, password: body.password, device: request.deviceLabel, client: context.client,
                    linkToken: body.linkToken, deviceToken: request.deviceToken, locale: request.locale)
                if let waiting { try await providers.link(waiting, to: session) }
                return JSONResponse(.ok, SessionBody(session))
            }
        }
        routes.post("/auth/token/refresh") { request, context in
            let body = try await request.decodeJSON(RefreshRequest.self, context: context)
            return JSONResponse(.ok, SessionBody(try await accounts.refresh(body.refreshToken)))
        }
        signedIn.post("/auth/logout") { request, context in
            let session = try context.requireSession()
            try await accounts.revoke(session: session, reason: "logout")
            return Response(status: .noContent)
        }
        routes.post("/auth/email/verify") { request, context in
            let body = try await request.decodeJSON(TokenRequest.self, context: context)
            let confirmed = try await accounts.verifyEmail(token: body.token, signingIn: request.signInDevice)
            return JSONResponse(.ok, ["email_verified": .bool(confirmed.state.emailVerified)], signIn: confirmed.signIn)
        }
        signedIn.post("/auth/email/resend-verification") { request, context in
            let session = try context.requireSession()
            return JSONResponse.linkSent(resendAfter: try await accounts.resendVerification(session.accountID))
        }
        routes.post("/auth/password/forgot") { request, context in
            let body = try await request.decodeJSON(ForgotRequest.self, context: context)
            let resendAfter = try await ErrorTranslation.singleRule {
                try await accounts.forgotPassword(email: body.email, client: context.client, language: Language(tag: request.locale))
            }
            return JSONResponse.linkSent(resendAfter: resendAfter)
        }
        routes.post("/auth/password/reset") { request, context in
            let body = try await request.decodeJSON(ResetRequest.self, context: context)
            let reset = try await accounts.resetPassword(token: body.token, newPassword: body.newPassword)
            return JSONResponse(
                .ok,
                [
                    "message": .string("Password updated. Sign in with your new password."),
                    "removed_methods": .array(reset.removedMethods.map(JSONValue.string)), "two_factor_reset": .bool(reset.twoFactorReset),
                ])
        }
        routes.get("/me") { request, _ in
            JSONResponse(.ok, MeBody(try await signedInAccount(request), avatars: avatars))
        }
        // Read with its session in one query, so not behind SessionMiddleware (a second).
        routes.get("/me/auth-methods") { request, _ in
            JSONResponse(.ok, AuthMethodsBody(try await signedInAccount(request)))
        }
        return routes
    }

    /// The account of the request's access token, read in one query, or `401 unauthorized`.
    func signedInAccount(_ request: Request) async throws -> AccountSummary {
        guard let summary = try await accounts.summary(accessToken: try Self.bearerToken(request)) else { throw Self.unauthorized }
        return summary
    }

    static func bearerToken(_ request: Request) throws -> String {
        guard let token = request.bearerCredential else { throw unauthorized }
        return token
    }

    static let unauthorized = APIError(.unauthorized, .unauthorized, "Sign in to continue.", headers: [.wwwAuthenticate: "Bearer"])
}
