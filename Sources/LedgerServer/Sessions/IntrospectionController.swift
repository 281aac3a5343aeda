import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// `POST /sessions/introspect` for backends holding a `sessions:introspect` key.
public struct IntrospectionController: Sendable {
    let accounts: AccountService
    let keys: APIKeyGuard

    public init(accounts: AccountService, keys: APIKeyGuard) {
        self.accounts = accounts
        self.keys = keys
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.post("/sessions/introspect") { request, context in
            try await keys.authorize(request, scope: .sessionsIntrospect)
            let body = try await request.decodeJSON(TokenRequest.self, context: context)
            // openapi.yaml's shape whatever the answer: an inactive token gets nulls, and nothing else
            // about it (unknown, expired and revoked read the same).
            guard let found = try await accounts.introspect(accessToken: body.token) else {
                return JSONResponse(
                    .ok,
                    [
                        "active": .bool(false), "account_id": .null, "session_id": .null, "email_verified": .null, "expires_at": .null,
                    ])
            }
            return JSONResponse(
                .ok,
                [
                    "active": .bool(true), "account_id": .string(found.accountID.lowercased),
                    "session_id": .string(found.sessionID.lowercased), "email_verified": .bool(found.emailVerified),
                    "expires_at": .string(RFC3339.format(found.expiresAt)),
                ])
        }
        return routes
    }
}
