import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// `POST /sessions/introspect` for backends holding a `sessions:introspect` key.
public struct IntrospectionController: Sendable {
    let accounts: AccountService
    let keys: APIKeys

    public init(accounts: AccountService, keys: APIKeys) {
        self.accounts = accounts
        self.keys = keys
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.post("/sessions/introspect") { request, context in
            try await Self.authorize(request, keys: keys, scope: .sessionsIntrospect)
            let body = try await request.decodeJSON(TokenRequest.self, context: context)
            guard let found = try await accounts.introspect(accessToken: body.token) else {
                return JSONResponse(.ok, ["active": .bool(false)])
            }
            return JSONResponse(.ok, [
                "active": .bool(true), "account_id": .string(found.accountID.lowercased),
                "session_id": .string(found.sessionID.lowercased), "email_verified": .bool(found.emailVerified),
                "expires_at": .string(RFC3339.format(found.expiresAt)),
            ])
        }
        return routes
    }

    /// A service call's API key: `401 invalid_api_key` when wrong, `403 insufficient_scope` without the scope.
    static func authorize(_ request: Request, keys: APIKeys, scope: APIKeys.Scope) async throws {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
            throw APIError(.unauthorized, .init("invalid_api_key"), "An API key is required.", headers: [.wwwAuthenticate: "Bearer"])
        }
        do {
            try await keys.authorize(String(header.dropFirst(7)), scope: scope)
        } catch APIKeyError.unknown {
            throw APIError(.unauthorized, .init("invalid_api_key"), "The API key is not valid.", headers: [.wwwAuthenticate: "Bearer"])
        } catch APIKeyError.missingScope {
            throw APIError(.forbidden, .init("insufficient_scope"), "The API key lacks the \(scope.rawValue) scope.")
        }
    }
}
