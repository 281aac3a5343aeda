import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Sign in with Apple and Google; linking, disconnecting, and re-auth by them.
public struct ProviderController: Sendable {
    let providers: ProviderService
    let accounts: AccountService

    public init(providers: ProviderService, accounts: AccountService) {
        self.providers = providers
        self.accounts = accounts
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        routes.post("/auth/apple", use: signIn(.apple))
        routes.post("/auth/google", use: signIn(.google))
        signedIn.post("/auth/reauth/apple", use: reauth(.apple))
        signedIn.post("/auth/reauth/google", use: reauth(.google))
        signedIn.post("/me/auth-methods/link") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(LinkRequest.self, context: context)
            let state = try await providers.link(
                session, try Self.provider(body.provider), idToken: body.idToken, reauthToken: request.headers[.xReauthToken],
                authorizationCode: body.authorizationCode, client: context.client)
            return JSONResponse(.ok, AuthMethodsBody(AccountSummary(state)))
        }
        signedIn.post("/me/auth-methods/disconnect") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(DisconnectRequest.self, context: context)
            let state = try await providers.disconnect(
                session, try Self.provider(body.provider), reauthToken: request.headers[.xReauthToken])
            return JSONResponse(.ok, AuthMethodsBody(AccountSummary(state)))
        }
        return routes
    }

    /// `POST /auth/apple|google`: `200` for an existing (or linked) account, `201` for a new one.
    func signIn(_ provider: IdentityProvider) -> @Sendable (Request, LedgerRequestContext) async throws -> JSONResponse {
        { request, context in
            let body = try await request.decodeJSON(ProviderSignInRequest.self, context: context)
            return try await JSONResponse.orMFARequired {
                let (session, created) = try await providers.signIn(
                    provider, idToken: body.idToken, nonce: body.nonce, displayName: body.displayName,
                    device: request.deviceLabel, linkToken: body.linkToken, authorizationCode: body.authorizationCode,
                    client: context.client, deviceToken: request.deviceToken, locale: request.locale)
                return JSONResponse(created ? .created : .ok, SessionBody(session))
            }
        }
    }

    /// `POST /auth/reauth/apple|google`: a grant when the token is the linked identity's.
    func reauth(_ provider: IdentityProvider) -> @Sendable (Request, LedgerRequestContext) async throws -> JSONResponse {
        { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(ProviderTokenRequest.self, context: context)
            return JSONResponse(.ok, ReauthController.grantBody(try await providers.reauth(session, provider, idToken: body.idToken)))
        }
    }

    static func provider(_ raw: String) throws -> IdentityProvider {
        guard let provider = IdentityProvider(rawValue: raw) else {
            throw AccountService.ValidationFailure(problems: [
                .init(field: "provider", code: "invalid_provider", message: "Use apple or google.")
            ])
        }
        return provider
    }
}
