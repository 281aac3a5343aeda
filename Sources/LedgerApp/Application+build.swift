import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerServer
import Logging
import ServiceLifecycle

/// The HTTP application: the router on a server at the configured address.
public func buildApplication(_ services: LedgerServices, logger: Logger) -> some ApplicationProtocol {
    Application(
        router: buildRouter(services),
        configuration: .init(
            address: .hostname(services.configuration.host, port: services.configuration.port),
            serverName: "account-ledger"),
        eventLoopGroupProvider: .shared(HTTPEventLoops.group(threads: services.configuration.httpThreads)),
        logger: logger)
}

/// `/metrics` alone, on `LEDGER_METRICS_PORT` when it is set (so the port the world reaches
/// need not serve it); nil when metrics stay on the API's port.
public func buildMetricsApplication(_ services: LedgerServices, logger: Logger) -> (some ApplicationProtocol)? {
    guard let port = services.configuration.metricsPort else { return nil as Application<RouterResponder<LedgerRequestContext>>? }
    return Application(
        router: buildMetricsRouter(services),
        configuration: .init(address: .hostname(services.configuration.host, port: port), serverName: "account-ledger-metrics"),
        eventLoopGroupProvider: .shared(HTTPEventLoops.group(threads: services.configuration.httpThreads)),
        logger: logger)
}

/// The router of `/metrics` on its own port.
public func buildMetricsRouter(_ services: LedgerServices) -> Router<LedgerRequestContext> {
    let router = Router(context: LedgerRequestContext.self)
    router.addRoutes(metricsController(services).endpoints)
    return router
}

func metricsController(_ services: LedgerServices) -> MetricsController {
    MetricsController(
        metrics: services.metrics,
        statistics: { [client = services.client] in try await OperationalStatistics.read(client: client, now: $0) },
        subscriptions: services.subscriptions, clock: services.clock)
}

/// Runs the background `workers` with the API (and `/metrics` on its own port when configured)
/// in one service group until SIGTERM or SIGINT. On shutdown the servers stop taking requests
/// first, then the workers finish their pass (a group shuts its services down last to first).
public func runApplications(_ services: LedgerServices, workers: [any Service], logger: Logger) async throws {
    var members: [ServiceGroupConfiguration.ServiceConfiguration] = workers.map { .init(service: LoggedService(service: $0)) }
    if let metrics = buildMetricsApplication(services, logger: logger) { members.append(.init(service: LoggedService(service: metrics))) }
    members.append(.init(service: LoggedService(service: buildApplication(services, logger: logger))))
    let group = ServiceGroup(configuration: .init(services: members, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}

/// Every route of the API, behind the request-id and error middleware.
public func buildRouter(_ services: LedgerServices) -> Router<LedgerRequestContext> {
    let router = Router(context: LedgerRequestContext.self)
    let trustedProxies = services.configuration.trustedProxies.compactMap(CIDR.init)
    router.add(middleware: RequestIDMiddleware(metrics: services.metrics))
    router.add(middleware: ClientAddressMiddleware(trustedProxies: trustedProxies))
    router.add(middleware: EventMetadataMiddleware())
    router.addRoutes(
        HealthController(
            readiness: ReadinessProbe(client: services.client, migrator: services.migrator, standby: services.standbyMonitor)
        ).endpoints)
    router.addRoutes(AuthController(accounts: services.accounts, providers: services.providers).endpoints)
    router.addRoutes(IntrospectionController(accounts: services.accounts, keys: services.apiKeyGuard).endpoints)
    router.addRoutes(ProfileController(accounts: services.accounts, supportEmail: services.configuration.supportEmail).endpoints)
    router.addRoutes(CountriesController().endpoints)
    router.addRoutes(CredentialsController(accounts: services.accounts).endpoints)
    router.addRoutes(DeletionController(accounts: services.accounts, keys: services.apiKeyGuard).endpoints)
    router.addRoutes(AccountAdminController(accounts: services.accounts, keys: services.apiKeyGuard).endpoints)
    router.addRoutes(AppleNotificationsController(providers: services.providers).endpoints)
    router.addRoutes(ProviderController(providers: services.providers, accounts: services.accounts).endpoints)
    router.addRoutes(PhoneController(otp: services.otp, accounts: services.accounts, providers: services.providers).endpoints)
    router.addRoutes(ReauthController(reauth: services.reauth, accounts: services.accounts).endpoints)
    router.addRoutes(TwoFactorController(twoFactor: services.twoFactor, accounts: services.accounts).endpoints)
    router.addRoutes(PasskeyController(passkeys: services.passkeys, accounts: services.accounts).endpoints)
    router.addRoutes(LinkPagesController(accounts: services.accounts, pages: services.pages).endpoints)
    router.addRoutes(
        EventsController(
            store: services.readStore, keys: services.apiKeyGuard, streamsPerKey: services.configuration.streamsPerKey,
            keyRecheckInterval: services.configuration.streamKeyRecheckInterval, eventSource: services.configuration.eventSource
        ).endpoints)
    router.addRoutes(AuditController(audit: services.audit, keys: services.apiKeyGuard, clock: services.clock).endpoints)
    router.addRoutes(SubscriptionsController(subscriptions: services.subscriptions, keys: services.apiKeyGuard).endpoints)
    if services.configuration.metricsPort == nil { router.addRoutes(metricsController(services).endpoints) }
    if let openAPI = services.openAPI { router.addRoutes(openAPI.endpoints) }
    return router
}
