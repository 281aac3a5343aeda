import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Profile, handles, email availability, sessions and the support prefill
/// (docs/architecture.md "Accounts and sessions").
public struct ProfileController: Sendable {
    let accounts: AccountService
    let supportEmail: String

    public init(accounts: AccountService, supportEmail: String) {
        self.accounts = accounts
        self.supportEmail = supportEmail
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        signedIn.patch("/me/profile") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(ProfileRequest.self, context: context)
            let state = try await accounts.updateProfile(session.accountID, displayName: body.displayName, handle: body.handle)
            return JSONResponse(.ok, MeBody(state))
        }
        routes.get("/handles/available") { request, _ in
            let handle = request.uri.queryParameters["handle"].map(String.init) ?? ""
            let available = try await ErrorTranslation.singleRule { try await accounts.isHandleAvailable(handle) }
            return JSONResponse(.ok, ["available": .bool(available)])
        }
        signedIn.get("/auth/email-available") { request, context in
            let session = try context.requireSession()
            let email = request.uri.queryParameters["email"].map(String.init) ?? ""
            let available = try await ErrorTranslation.singleRule {
                try await accounts.isEmailAvailable(email, checkedBy: session.accountID, client: context.client)
            }
            return JSONResponse(.ok, ["available": .bool(available)])
        }
        signedIn.get("/me/sessions") { request, context in
            let session = try context.requireSession()
            let state = try await accounts.account(session.accountID)
            let list = state.sessions.values.filter(\.isActive).sorted { $0.createdAt < $1.createdAt }.map { item in
                JSONValue.object([
                    "id": .string(item.id.lowercased), "created_at": .string(RFC3339.format(item.createdAt)),
                    "last_used_at": .string(RFC3339.format(item.lastUsedAt)),
                    "device": JSONValue(item.device), "current": .bool(item.id == session.sessionID),
                ])
            }
            return JSONResponse(.ok, ["sessions": .array(list)])
        }
        signedIn.delete("/me/sessions/:id") { request, context in
            let session = try context.requireSession()
            guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else {
                throw APIError(.notFound, .notFound, "No such session.")
            }
            try await accounts.revoke(session: SessionRef(accountID: session.accountID, sessionID: id), reason: "revoked_by_user")
            return Response(status: .noContent)
        }
        signedIn.get("/me/support") { request, context in
            let session = try context.requireSession()
            // The short id people can read out; `ledger accounts find` turns it back into the account.
            let userID = PublicUserID(accountID: session.accountID).description
            let appVersion = request.headers[HTTPField.Name("X-App-Version")!] ?? "unknown"
            let device = request.headers[.userAgent] ?? "unknown"
            return JSONResponse(
                .ok,
                [
                    "user_id": .string(userID),
                    "support_email": .string(supportEmail),
                    "subject": .string("Help [\(userID)]"),
                    "body": .string("\n\n\n—\nUser ID: \(userID)\nApp version: \(appVersion)\nDevice: \(device)\n"),
                ])
        }
        return routes
    }
}
