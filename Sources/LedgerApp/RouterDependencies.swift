import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEvents
import LedgerServer

/// What `buildRouter` needs, as the protocols the controllers take: `LedgerServices` gives the
/// PostgreSQL adapters (`routerDependencies`); the HTTP tests give in-memory ones.
public struct RouterDependencies: Sendable {
    public let configuration: LedgerConfiguration
    public let clock: any LedgerClock
    public let metrics: LedgerMetrics
    public let readiness: any Readiness
    public let account: AccountServices
    /// The API-key check of every service call, with its per-key rate limit.
    public let apiKeyGuard: APIKeyGuard
    /// The event API (the feed, the audit, the subscriptions and `/metrics`); nil for a router
    /// without it, whose routes are then not there.
    public let eventAPI: EventAPI?
    /// The OpenAPI document to serve, when it was found.
    public let openAPI: OpenAPIController?

    public init(
        configuration: LedgerConfiguration, clock: any LedgerClock, metrics: LedgerMetrics, readiness: any Readiness,
        account: AccountServices, apiKeyGuard: APIKeyGuard, eventAPI: EventAPI?, openAPI: OpenAPIController?
    ) {
        self.configuration = configuration
        self.clock = clock
        self.metrics = metrics
        self.readiness = readiness
        self.account = account
        self.apiKeyGuard = apiKeyGuard
        self.eventAPI = eventAPI
        self.openAPI = openAPI
    }

    /// The event API's stores.
    public struct EventAPI: Sendable {
        /// Where the feed and the event stream read (a standby when one is configured).
        public let feed: any FeedSource
        public let audit: any AccountAuditing
        public let subscriptions: any WebhookSubscriptionStore
        /// The cluster's figures `/metrics` shows, read at a time.
        public let statistics: @Sendable (Date) async throws -> OperationalStatistics

        public init(
            feed: any FeedSource, audit: any AccountAuditing, subscriptions: any WebhookSubscriptionStore,
            statistics: @escaping @Sendable (Date) async throws -> OperationalStatistics
        ) {
            self.feed = feed
            self.audit = audit
            self.subscriptions = subscriptions
            self.statistics = statistics
        }
    }
}
