import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Operators disabling and enabling accounts by API key (`accounts:admin`). The events name the
/// key (their `actor`) and carry the reason.
public struct AccountAdminController: Sendable {
    let accounts: AccountService
    let keys: APIKeyGuard

    public init(accounts: AccountService, keys: APIKeyGuard) {
        self.accounts = accounts
        self.keys = keys
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.post("/accounts/:id/disable") { request, context in
            try await keys.acting(request, scope: .accountsAdmin) { _ in
                let accountID = try Self.accountID(context)
                let body = try await request.decodeJSON(DisableRequest.self, context: context)
                let reason = try SupportDesk.checkedReason(body.reason)
                return JSONResponse(.ok, Self.statusBody(try await accounts.disable(accountID, reason: reason)))
            }
        }
        routes.post("/accounts/:id/enable") { request, context in
            try await keys.acting(request, scope: .accountsAdmin) { _ in
                JSONResponse(.ok, Self.statusBody(try await accounts.enable(try Self.accountID(context))))
            }
        }
        return routes
    }

    static func accountID(_ context: LedgerRequestContext) throws -> UUID {
        guard let accountID = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else {
            throw APIError(.notFound, .init("no_account"), "No account found.")
        }
        return accountID
    }

    /// `{account_id, disabled, disabled_at, reason}`.
    static func statusBody(_ state: AccountState) -> [String: JSONValue] {
        [
            "account_id": .string(state.accountID.lowercased), "disabled": .bool(state.isDisabled),
            "disabled_at": JSONValue(timestamp: state.disabledAt), "reason": JSONValue(state.disabledReason),
        ]
    }
}
