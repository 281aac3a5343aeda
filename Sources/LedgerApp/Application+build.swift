import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerServer
import Logging
import ServiceLifecycle

/// The HTTP application: the router on a server at the configured address, speaking HTTPS
/// (HTTP/1.1 and HTTP/2, by ALPN) with `tls`, plain HTTP/1.1 without.
public func buildApplication(_ services: LedgerServices, tls: TLSCertificates? = nil, logger: Logger) throws -> some ApplicationProtocol {
    // Facing clients directly, a connection is closed once idle a minute, and after an hour
    // whatever it does (gracefully: its streams finish), so stalled ones do not pile up.
    let connections = HTTP2UpgradeChannel.Configuration(
        idleTimeout: .seconds(60), gracefulCloseTimeout: .seconds(15), maxAgeTimeout: .seconds(3600),
        streamConfiguration: .init(idleTimeout: .seconds(60)))
    let server: HTTPServerBuilder =
        try tls.map { try .http2Upgrade(tlsConfiguration: $0.serverConfiguration(), configuration: connections) } ?? .http1()
    return Application(
        router: buildRouter(services),
        server: server,
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
        router: buildMetricsRouter(services.routerDependencies),
        configuration: .init(address: .hostname(services.configuration.host, port: port), serverName: "account-ledger-metrics"),
        eventLoopGroupProvider: .shared(HTTPEventLoops.group(threads: services.configuration.httpThreads)),
        logger: logger)
}

/// The router of `/metrics` on its own port.
public func buildMetricsRouter(_ dependencies: RouterDependencies) -> Router<LedgerRequestContext> {
    let router = Router(context: LedgerRequestContext.self)
    if let metrics = metricsController(dependencies) { router.addRoutes(metrics.endpoints) }
    return router
}

/// `/metrics`, when the event API is there (its figures read the subscriptions and the cluster).
func metricsController(_ dependencies: RouterDependencies) -> MetricsController? {
    dependencies.eventAPI.map {
        MetricsController(
            metrics: dependencies.metrics, statistics: $0.statistics, subscriptions: $0.subscriptions,
            standby: { [readiness = dependencies.readiness] in readiness.standbyStatus() }, clock: dependencies.clock)
    }
}

/// Runs the background `workers` with the API (and `/metrics` on its own port when configured)
/// in one service group until SIGTERM or SIGINT. On shutdown the servers stop taking requests
/// first, then the workers finish their pass (a group shuts its services down last to first).
/// With `tls`, `SIGHUP` reloads its files (`TLSReloadService`).
public func runApplications(_ services: LedgerServices, tls: TLSCertificates? = nil, workers: [any Service], logger: Logger) async throws {
    var members: [ServiceGroupConfiguration.ServiceConfiguration] = workers.map { .init(service: LoggedService(service: $0)) }
    // Always, so that a SIGHUP never stops the service (its default action), TLS or not.
    members.append(.init(service: LoggedService(service: TLSReloadService(certificates: tls, logger: logger))))
    if let metrics = buildMetricsApplication(services, logger: logger) { members.append(.init(service: LoggedService(service: metrics))) }
    members.append(.init(service: LoggedService(service: try buildApplication(services, tls: tls, logger: logger))))
    let group = ServiceGroup(configuration: .init(services: members, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}

/// Every route of the API on PostgreSQL, behind the request-id and error middleware.
public func buildRouter(_ services: LedgerServices) -> Router<LedgerRequestContext> {
    buildRouter(services.routerDependencies)
}

/// Every route of the API over `dependencies`, behind the request-id and error middleware; the
/// event API's routes only when `eventAPI` is given.
public func buildRouter(_ dependencies: RouterDependencies) -> Router<LedgerRequestContext> {
    let router = Router(context: LedgerRequestContext.self)
    let configuration = dependencies.configuration
    let account = dependencies.account
    let keys = dependencies.apiKeyGuard
    if configuration.tls != nil {
        router.add(middleware: StrictTransportSecurityMiddleware(value: LedgerConfiguration.strictTransportSecurity))
    }
    router.add(middleware: RequestIDMiddleware(metrics: dependencies.metrics, defaultLanguage: configuration.policies.defaultLanguage))
    router.add(middleware: ClientAddressMiddleware(trustedProxies: configuration.trustedProxies.compactMap(CIDR.init)))
    router.add(middleware: EventMetadataMiddleware())
    router.addRoutes(HealthController(readiness: dependencies.readiness).endpoints)
    router.addRoutes(AuthController(accounts: account.accounts, providers: account.providers, avatars: account.avatars.urls).endpoints)
    router.addRoutes(IntrospectionController(accounts: account.accounts, keys: keys).endpoints)
    router.addRoutes(TokenKeysController(tokens: account.environment.accessTokens, issuer: configuration.accessTokens.issuer).endpoints)
    router.addRoutes(
        ProfileController(accounts: account.accounts, supportEmail: configuration.supportEmail, avatars: account.avatars.urls).endpoints)
    router.addRoutes(AvatarController(avatars: account.avatars, accounts: account.accounts).endpoints)
    router.addRoutes(CountriesController().endpoints)
    router.addRoutes(CredentialsController(accounts: account.accounts).endpoints)
    router.addRoutes(DeletionController(accounts: account.accounts, keys: keys).endpoints)
    router.addRoutes(AccountAdminController(accounts: account.accounts, keys: keys).endpoints)
    router.addRoutes(AccountImportController(importer: account.importer, keys: keys).endpoints)
    router.addRoutes(SupportController(desk: account.desk, keys: keys).endpoints)
    router.addRoutes(AppleNotificationsController(providers: account.providers).endpoints)
    router.addRoutes(ProviderController(providers: account.providers, accounts: account.accounts).endpoints)
    router.addRoutes(PhoneController(otp: account.otp, accounts: account.accounts, providers: account.providers).endpoints)
    router.addRoutes(ReauthController(reauth: account.reauth, accounts: account.accounts).endpoints)
    router.addRoutes(TwoFactorController(twoFactor: account.twoFactor, accounts: account.accounts).endpoints)
    router.addRoutes(PasskeyController(passkeys: account.passkeys, accounts: account.accounts).endpoints)
    router.addRoutes(LinkPagesController(accounts: account.accounts, pages: account.pages).endpoints)
    if let console = account.console {
        router.addRoutes(
            ConsoleController(console: console, desk: account.desk, audit: dependencies.eventAPI?.audit, pages: account.consolePages)
                .endpoints)
    }
    if let eventAPI = dependencies.eventAPI {
        router.addRoutes(
            EventsController(
                store: eventAPI.feed, keys: keys, streamsPerKey: configuration.streamsPerKey,
                keyRecheckInterval: configuration.streamKeyRecheckInterval, eventSource: configuration.eventSource
            ).endpoints)
        router.addRoutes(AuditController(audit: eventAPI.audit, keys: keys, clock: dependencies.clock).endpoints)
        router.addRoutes(SubscriptionsController(subscriptions: eventAPI.subscriptions, keys: keys).endpoints)
    }
    if configuration.metricsPort == nil, let metrics = metricsController(dependencies) { router.addRoutes(metrics.endpoints) }
    if let openAPI = dependencies.openAPI { router.addRoutes(openAPI.endpoints) }
    return router
}
