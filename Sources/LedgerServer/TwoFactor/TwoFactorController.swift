import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Two-factor authentication: TOTP enrolment and removal, recovery codes, a sign-in's second
/// step, and re-auth by a TOTP code (docs/architecture.md "Two-factor").
public struct TwoFactorController: Sendable {
    let twoFactor: TwoFactorService
    let accounts: AccountService

    public init(twoFactor: TwoFactorService, accounts: AccountService) {
        self.twoFactor = twoFactor
        self.accounts = accounts
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        signedIn.post("/me/mfa/totp") { request, context in
            let enrolment = try await twoFactor.beginTOTP(try context.requireSession(), reauthToken: request.headers[.xReauthToken])
            return JSONResponse(.ok, ["secret": .string(enrolment.secret), "otpauth_uri": .string(enrolment.uri)])
        }
        signedIn.post("/me/mfa/totp/confirm") { request, context in
            let body = try await request.decodeJSON(TOTPCodeRequest.self, context: context)
            let codes = try await twoFactor.confirmTOTP(try context.requireSession(), code: body.code, client: context.client)
            return JSONResponse(.ok, RecoveryCodesBody(codes: codes))
        }
        signedIn.delete("/me/mfa/totp") { request, context in
            let state = try await twoFactor.disableTOTP(try context.requireSession(), reauthToken: request.headers[.xReauthToken])
            return JSONResponse(.ok, AuthMethodsBody(AccountSummary(state)))
        }
        signedIn.post("/me/mfa/recovery-codes") { request, context in
            let codes = try await twoFactor.regenerateRecoveryCodes(
                try context.requireSession(), reauthToken: request.headers[.xReauthToken])
            return JSONResponse(.ok, RecoveryCodesBody(codes: codes))
        }
        routes.post("/auth/mfa/verify") { request, context in
            let body = try await request.decodeJSON(MFAVerifyRequest.self, context: context)
            let session = try await twoFactor.verify(
                mfaToken: body.mfaToken, code: body.code, recoveryCode: body.recoveryCode, client: context.client,
                locale: request.locale)
            return JSONResponse(.ok, SessionBody(session))
        }
        signedIn.post("/auth/reauth/totp") { request, context in
            let body = try await request.decodeJSON(TOTPCodeRequest.self, context: context)
            let grant = try await twoFactor.reauth(try context.requireSession(), code: body.code, client: context.client)
            return JSONResponse(.ok, ReauthController.grantBody(grant))
        }
        return routes
    }
}
