import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// "Verify it's you" (docs/architecture.md "Re-auth"): the picker's options and the password and email-link
/// grants. Phone grants are `verify-otp` with purpose `reauth`.
public struct ReauthController: Sendable {
    let reauth: ReauthService
    let accounts: AccountService

    public init(reauth: ReauthService, accounts: AccountService) {
        self.reauth = reauth
        self.accounts = accounts
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        signedIn.get("/me/reauth-options") { request, context in
            let session = try context.requireSession()
            let action = request.uri.queryParameters["action"].map(String.init) ?? ""
            let options = try await reauth.options(
                session, action: action, platform: request.uri.queryParameters["platform"].map(String.init))
            return JSONResponse(
                .ok,
                [
                    "action": .string(action), "methods": .array(options.methods.map { .string($0.rawValue) }),
                    "last_method": .bool(options.lastMethod),
                ])
        }
        signedIn.post("/auth/reauth/password") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(PasswordRequest.self, context: context)
            let grant = try await reauth.withPassword(session, password: body.password, client: context.client)
            return JSONResponse(.ok, Self.grantBody(grant))
        }
        signedIn.post("/auth/reauth/nonce") { request, context in
            let issued = try await reauth.issueNonce(try context.requireSession())
            return JSONResponse(.ok, ["nonce": .string(issued.nonce), "expires_at": .string(RFC3339.format(issued.expiresAt))])
        }
        signedIn.post("/auth/reauth/email-link") { request, context in
            return JSONResponse.linkSent(resendAfter: try await reauth.sendEmailLink(try context.requireSession()))
        }
        routes.post("/auth/reauth/email-link/confirm") { request, context in
            let body = try await request.decodeJSON(TokenRequest.self, context: context)
            return JSONResponse(.ok, Self.grantBody(try await reauth.confirmEmailLink(token: body.token)))
        }
        return routes
    }

    /// `{reauth_token, expires_at}`.
    static func grantBody(_ grant: ReauthGrantToken) -> [String: JSONValue] {
        ["reauth_token": .string(grant.token), "expires_at": .string(RFC3339.format(grant.expiresAt))]
    }
}
