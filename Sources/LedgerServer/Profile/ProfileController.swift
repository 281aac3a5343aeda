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
    /// Where the profile's `avatar_url` points.
    let avatars: AvatarURLs

    public init(accounts: AccountService, supportEmail: String, avatars: AvatarURLs) {
        self.accounts = accounts
        self.supportEmail = supportEmail
        self.avatars = avatars
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        signedIn.patch("/me/profile") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(ProfileRequest.self, context: context)
            let state = try await accounts.updateProfile(
                session.accountID, displayName: body.displayName, handle: body.handle, locale: body.locale)
            return JSONResponse(.ok, MeBody(state, avatars: avatars))
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
        // Read with its session in one query, so not behind SessionMiddleware (a second).
        routes.get("/me/sessions") { request, _ in
            guard let (session, sessions) = try await accounts.liveSessions(accessToken: try AuthController.bearerToken(request)) else {
                throw AuthController.unauthorized
            }
            let list = sessions.map { item in
                JSONValue.object([
                    "id": .string(item.sessionID.lowercased), "created_at": .string(RFC3339.format(item.createdAt)),
                    "last_used_at": .string(RFC3339.format(item.lastUsedAt)), "method": .string(item.method),
                    "device": JSONValue(item.device), "current": .bool(item.sessionID == session.sessionID),
                ])
            }
            return JSONResponse(.ok, ["sessions": .array(list)])
        }
        signedIn.delete("/me/sessions") { request, context in
            let session = try context.requireSession()
            guard request.uri.queryParameters["others"] == "true" else {
                throw APIError(.badRequest, .invalidRequest, "Add ?others=true to sign out every other session.")
            }
            try await accounts.revokeOtherSessions(session)
            return Response(status: .noContent)
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
