import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Phone codes for every purpose (docs/architecture.md "Phone and OTP").
public struct PhoneController: Sendable {
    let otp: OTPService
    let accounts: AccountService
    /// Links the provider identity a `link_token` carries to the account a code signs in to.
    let providers: ProviderService

    public init(otp: OTPService, accounts: AccountService, providers: ProviderService) {
        self.otp = otp
        self.accounts = accounts
        self.providers = providers
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
            .add(middleware: SessionMiddleware(accounts: accounts, required: false))
        routes.post("/auth/phone/request-otp") { request, context in
            let body = try await request.decodeJSON(RequestOTPRequest.self, context: context)
            let session = context.session
            let requested = try await ErrorTranslation.singleRule {
                try await otp.request(
                    phone: body.phone, country: body.country, purpose: body.purpose, session: session,
                    reauthToken: request.headers[.xReauthToken], client: context.client, locale: request.locale)
            }
            return JSONResponse(
                .accepted,
                [
                    "request_id": .string(requested.requestID.lowercased), "expires_in": .int(Int64(requested.expiresIn)),
                    "resend_after": .int(Int64(requested.resendAfter)),
                ])
        }
        routes.post("/auth/phone/verify-otp") { request, context in
            let body = try await request.decodeJSON(VerifyOTPRequest.self, context: context)
            let waiting = try body.linkToken.map(providers.waitingIdentity)
            let session = context.session
            return try await JSONResponse.orMFARequired {
                let outcome = try await otp.verify(
                    requestID: body.requestID, code: body.code, session: session, reauthToken: request.headers[.xReauthToken],
                    device: request.deviceLabel, linkToken: body.linkToken, deviceToken: request.deviceToken,
                    locale: request.locale)
                switch outcome {
                case .session(let signedIn, _):
                    if let waiting { try await providers.link(waiting, to: signedIn) }
                    return JSONResponse(.ok, SessionBody(signedIn))
                case .account(let state):
                    return JSONResponse(.ok, AuthMethodsBody(AccountSummary(state)))
                case .reauth(let grant):
                    return JSONResponse(.ok, ReauthController.grantBody(grant))
                }
            }
        }
        routes.delete("/auth/phone/otp/:request_id") { request, context in
            let session = context.session
            try await otp.cancel(requestID: context.parameters.get("request_id") ?? "", session: session)
            return Response(status: .noContent)
        }
        return routes
    }
}
