import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// The support desk's API (docs/support.md, docs/api.md "Support: the admin API and the
/// console"): `accounts:support` finds, looks and makes the everyday fixes, `accounts:admin`
/// the heavy ones. Every call names its operator (`X-Ledger-Operator`), every change its
/// reason; `SupportDesk` records each on the account's stream. Checked in this order: the key
/// and its scope, the operator, the body, the account.
public struct SupportController: Sendable {
    let desk: SupportDesk
    let keys: APIKeyGuard

    public init(desk: SupportDesk, keys: APIKeyGuard) {
        self.desk = desk
        self.keys = keys
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/admin/accounts") { request, _ in
            try await acting(request, .accountsSupport) { actor in
                let query = try Self.query(request.uri.queryParameters)
                let found = try await desk.search(query, actor: actor)
                return JSONResponse(.ok, ["accounts": .array(found.map { .object(SupportSummaryBody($0).fields) })])
            }
        }
        routes.get("/admin/accounts/:id") { request, context in
            try await acting(request, .accountsSupport) { actor in
                JSONResponse(.ok, SupportSummaryBody(try await desk.summary(try Self.accountID(context), actor: actor)).fields)
            }
        }
        routes.get("/admin/accounts/:id/sessions") { request, context in
            try await acting(request, .accountsSupport) { actor in
                let sessions = try await desk.sessions(try Self.accountID(context), actor: actor)
                return JSONResponse(.ok, ["sessions": .array(sessions.map(SupportSummaryBody.session))])
            }
        }
        routes.post("/admin/accounts/:id/sign-out") { request, context in
            try await changing(request, context, .accountsSupport) { accountID, actor, reason in
                let ended = try await desk.signOut(accountID, actor: actor, reason: reason)
                return JSONResponse(.ok, ["sessions_revoked": .int(Int64(ended))])
            }
        }
        routes.post("/admin/accounts/:id/password-reset") { request, context in
            try await changing(request, context, .accountsSupport) { accountID, actor, reason in
                try await desk.sendPasswordReset(accountID, actor: actor, reason: reason)
                return JSONResponse(.accepted, ["sent": .bool(true)])
            }
        }
        routes.post("/admin/accounts/:id/two-factor/reset") { request, context in
            try await changing(request, context, .accountsAdmin) { accountID, actor, reason in
                JSONResponse(.ok, SupportSummaryBody(try await desk.resetTwoFactor(accountID, actor: actor, reason: reason)).fields)
            }
        }
        routes.delete("/admin/accounts/:id/auth-methods/:method") { request, context in
            try await changing(request, context, .accountsAdmin) { accountID, actor, reason in
                let method = try Self.method(context.parameters.get("method"))
                let after = try await desk.removeMethod(method, of: accountID, actor: actor, reason: reason)
                return JSONResponse(.ok, AuthMethodsBody(AccountSummary(after)).fields)
            }
        }
        routes.delete("/admin/accounts/:id/passkeys/:passkey_id") { request, context in
            try await changing(request, context, .accountsAdmin) { accountID, actor, reason in
                guard let passkeyID = context.parameters.get("passkey_id").flatMap(UUID.init(uuidString:)) else {
                    throw APIError(.notFound, .notFound, IdentityError.passkeyNotFound.message)
                }
                let after = try await desk.removePasskey(passkeyID, of: accountID, actor: actor, reason: reason)
                return JSONResponse(.ok, AuthMethodsBody(AccountSummary(after)).fields)
            }
        }
        routes.post("/admin/accounts/:id/disable") { request, context in
            try await changing(request, context, .accountsAdmin) { accountID, actor, reason in
                JSONResponse(.ok, SupportSummaryBody(try await desk.disable(accountID, actor: actor, reason: reason)).fields)
            }
        }
        routes.post("/admin/accounts/:id/enable") { request, context in
            try await changing(request, context, .accountsAdmin) { accountID, actor, reason in
                JSONResponse(.ok, SupportSummaryBody(try await desk.enable(accountID, actor: actor, reason: reason)).fields)
            }
        }
        return routes
    }

    /// Runs `body` for the key (its events name `service:<key id>`) and the operator it names.
    func acting<Result: Sendable>(
        _ request: Request, _ scope: APIKeyScope, _ body: (SupportActor) async throws -> Result
    ) async throws -> Result {
        try await keys.acting(request, scope: scope) { key in
            guard let name = SupportDesk.checkedOperator(request.headers[.ledgerOperator]) else {
                throw APIError(
                    .badRequest, .init("operator_required"),
                    "Name who is acting in the X-Ledger-Operator header (1–200 characters).")
            }
            return try await body(SupportActor(keyID: key.id, operatorName: name))
        }
    }

    /// A change: the key, the operator, then the body's reason, then the account.
    func changing<Result: Sendable>(
        _ request: Request, _ context: LedgerRequestContext, _ scope: APIKeyScope,
        _ body: (UUID, SupportActor, String) async throws -> Result
    ) async throws -> Result {
        try await acting(request, scope) { actor in
            let buffer = try await request.collectBody()
            let change: SupportChangeRequest =
                buffer.readableBytes == 0
                ? SupportChangeRequest(reason: nil)
                : try Request.decodeJSON(SupportChangeRequest.self, from: buffer)
            let reason = try SupportDesk.checkedReason(change.reason ?? "")
            return try await body(try Self.accountID(context), actor, reason)
        }
    }

    /// Exactly one of `email`, `phone`, `user_id`, `handle`.
    static func query(_ parameters: Hummingbird.Parameters) throws -> SupportQuery {
        let given: [(String, (String) -> SupportQuery)] = [
            ("email", SupportQuery.email), ("phone", SupportQuery.phone), ("user_id", SupportQuery.userID),
            ("handle", SupportQuery.handle),
        ]
        let present = given.compactMap { name, make in parameters[Substring(name)].map { make(String($0)) } }
        guard present.count == 1, let query = present.first else {
            throw APIError(.badRequest, .invalidRequest, "Search by exactly one of email, phone, user_id or handle.")
        }
        return query
    }

    static func accountID(_ context: LedgerRequestContext) throws -> UUID {
        guard let accountID = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else {
            throw APIError(.notFound, .init("no_account"), "No account found.")
        }
        return accountID
    }

    /// A method of the path: `phone`, `email` (with its password), `apple`, `google`.
    static func method(_ name: String?) throws -> SignInMethod {
        switch name {
        case "phone": return .phone
        case "email": return .password
        case "apple": return .apple
        case "google": return .google
        default: throw APIError(.notFound, .notFound, "No such sign-in method: use phone, email, apple or google.")
        }
    }
}

/// `{reason}`: why support makes a change.
struct SupportChangeRequest: Decodable {
    let reason: String?
}
