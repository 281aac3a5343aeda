import Foundation
import HTTPTypes
import Hummingbird
import LedgerCore
import Logging

/// The HTTP application: the router on a server at the configured address.
public func buildApplication(_ services: LedgerServices, logger: Logger) -> some ApplicationProtocol {
    Application(
        router: buildRouter(services),
        configuration: .init(
            address: .hostname(services.configuration.host, port: services.configuration.port),
            serverName: "account-ledger"),
        logger: logger)
}

/// Every route of the API, behind the request-id and error middleware.
public func buildRouter(_ services: LedgerServices) -> Router<LedgerRequestContext> {
    let router = Router(context: LedgerRequestContext.self)
    let trustedProxies = services.configuration.trustedProxies.compactMap(CIDR.init)
    router.add(middleware: RequestIDMiddleware(metrics: services.metrics))
    router.add(middleware: ClientAddressMiddleware(trustedProxies: trustedProxies))
    router.add(middleware: EventMetadataMiddleware())
    router.addRoutes(HealthController(readiness: ReadinessProbe(client: services.client, migrator: services.migrator)).endpoints)
    router.addRoutes(AuthController(accounts: services.accounts).endpoints)
    router.addRoutes(IntrospectionController(accounts: services.accounts, keys: services.apiKeyGuard).endpoints)
    router.addRoutes(ProfileController(accounts: services.accounts, supportEmail: services.configuration.supportEmail).endpoints)
    router.addRoutes(CountriesController().endpoints)
    router.addRoutes(CredentialsController(accounts: services.accounts).endpoints)
    router.addRoutes(DeletionController(accounts: services.accounts, keys: services.apiKeyGuard).endpoints)
    router.addRoutes(ProviderController(providers: services.providers, accounts: services.accounts).endpoints)
    router.addRoutes(PhoneController(otp: services.otp, accounts: services.accounts).endpoints)
    router.addRoutes(ReauthController(reauth: services.reauth, accounts: services.accounts).endpoints)
    router.addRoutes(EventsController(
        store: services.eventStore, keys: services.apiKeyGuard, streamsPerKey: services.configuration.streamsPerKey,
        keyRecheckInterval: services.configuration.streamKeyRecheckInterval).endpoints)
    router.addRoutes(AuditController(audit: services.audit, keys: services.apiKeyGuard, clock: services.clock).endpoints)
    router.addRoutes(SubscriptionsController(subscriptions: services.subscriptions, keys: services.apiKeyGuard).endpoints)
    router.addRoutes(
        MetricsController(metrics: services.metrics, client: services.client, subscriptions: services.subscriptions, clock: services.clock)
            .endpoints)
    if let openAPI = services.openAPI { router.addRoutes(openAPI.endpoints) }
    return router
}
