import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Password change, add email & password, email change with its confirmation and revert links,
/// and removing the phone or the email (docs/architecture.md "Changes").
public struct CredentialsController: Sendable {
    let accounts: AccountService

    public init(accounts: AccountService) {
        self.accounts = accounts
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        signedIn.post("/auth/password/change") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(ChangePasswordRequest.self, context: context)
            try await accounts.changePassword(session, newPassword: body.newPassword, reauthToken: request.headers[.xReauthToken])
            return JSONResponse(.ok, ["message": .string("Password updated. You're signed out on other devices.")])
        }
        signedIn.post("/auth/email/add-with-password") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(SignInRequest.self, context: context)
            let addition = try await ErrorTranslation.singleRule {
                try await accounts.addEmailAndPassword(
                    session, email: body.email, password: body.password, reauthToken: request.headers[.xReauthToken],
                    client: context.client)
            }
            switch addition {
            case .passwordSet(let state): return JSONResponse(.ok, AuthMethodsBody(AccountSummary(state)))
            case .confirmationSent(let resendAfter): return JSONResponse.linkSent(resendAfter: resendAfter)
            }
        }
        signedIn.post("/auth/email/request-change") { request, context in
            let session = try context.requireSession()
            let body = try await request.decodeJSON(EmailChangeRequest.self, context: context)
            let resendAfter = try await ErrorTranslation.singleRule {
                try await accounts.requestEmailChange(
                    session, newEmail: body.newEmail, reauthToken: request.headers[.xReauthToken], client: context.client)
            }
            return JSONResponse.linkSent(resendAfter: resendAfter)
        }
        signedIn.delete("/me/auth-methods/phone", use: remove(.phone))
        signedIn.delete("/me/auth-methods/email", use: remove(.email))
        routes.post("/auth/email/confirm-change") { request, context in
            let body = try await request.decodeJSON(TokenRequest.self, context: context)
            let confirmed = try await accounts.confirmEmailChange(token: body.token, signingIn: request.signInDevice)
            return JSONResponse(.ok, AuthMethodsBody(AccountSummary(confirmed.state)), signIn: confirmed.signIn)
        }
        routes.post("/auth/email/revert") { request, context in
            let body = try await request.decodeJSON(RevertRequest.self, context: context)
            let revert = try await accounts.revertEmail(token: body.token, newPassword: body.newPassword)
            return JSONResponse(
                .ok,
                [
                    "email": JSONValue(revert.state.email), "removed_methods": .array(revert.removedMethods.map(JSONValue.string)),
                    "two_factor_reset": .bool(revert.twoFactorReset),
                    "message": .string("Your email address is restored. Sign in again on every device."),
                ])
        }
        return routes
    }

    /// `DELETE /me/auth-methods/phone|email`: the hub after the removal.
    func remove(_ method: AccountService.RemovableMethod) -> @Sendable (Request, LedgerRequestContext) async throws -> JSONResponse {
        { request, context in
            let state = try await accounts.remove(method, try context.requireSession(), reauthToken: request.headers[.xReauthToken])
            return JSONResponse(.ok, AuthMethodsBody(AccountSummary(state)))
        }
    }
}
