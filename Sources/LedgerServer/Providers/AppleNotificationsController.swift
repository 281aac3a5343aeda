import Foundation
import Hummingbird
import LedgerAccounts

/// Sign in with Apple's server-to-server notifications (`POST /webhooks/apple {payload}`), the
/// URL registered with Apple. The payload proves itself (a JWS Apple signed); `200` once handled
/// or ignored, so Apple does not resend; `400 invalid_notification` for what is not Apple's.
public struct AppleNotificationsController: Sendable {
    let providers: ProviderService

    public init(providers: ProviderService) {
        self.providers = providers
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.post("/webhooks/apple") { request, context in
            let body = try await request.decodeJSON(AppleNotificationRequest.self, context: context)
            do {
                let outcome = try await providers.handleAppleNotification(body.payload)
                context.logger.info("Apple notification", metadata: ["outcome": "\(outcome)"])
                return JSONResponse(.ok, [:])
            } catch let invalid as InvalidAppleNotification {
                // A refused notification may be Apple's own that the service could not check (a
                // missing client id, an unreachable JWKS): an operator must see it.
                context.logger.warning("Apple notification refused", metadata: ["reason": "\(invalid.reason)"])
                throw invalid
            }
        }
        return routes
    }
}
