import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore

/// `GET /metrics`: Prometheus text. Request latency histograms come from the middleware; the
/// cluster-wide gauges (append position, feed hold-back, outbox backlog, purge due and done,
/// webhook lag) are read from the database at each scrape. The purge's own gauges (whether this
/// instance leads it, the oldest due purge's age) are set by its ticks (`recordPurge`).
///
/// Unauthenticated, as Prometheus scrapes it: it names no account and no secret; expose it
/// on the internal network only.
public struct MetricsController: Sendable {
    let metrics: LedgerMetrics
    /// Reads the cluster-wide figures (from the database, in one round trip).
    let statistics: @Sendable (Date) async throws -> OperationalStatistics
    let subscriptions: any WebhookSubscriptionStore
    /// Where the readers read (`LEDGER_READ_DATABASE_URL`), when there is a standby.
    let standby: @Sendable () -> StandbyStatus?
    let clock: any LedgerClock
    /// The database gauges, read at most once per `gaugeAge` however often (or by however many
    /// at once) `/metrics` is asked: it needs no key, so it must not become a way to load the
    /// database.
    let gauges = GaugeCache()
    static let gaugeAge: Duration = .seconds(5)

    public init(
        metrics: LedgerMetrics, statistics: @escaping @Sendable (Date) async throws -> OperationalStatistics,
        subscriptions: any WebhookSubscriptionStore, standby: @escaping @Sendable () -> StandbyStatus? = { nil },
        clock: any LedgerClock
    ) {
        self.metrics = metrics
        self.statistics = statistics
        self.subscriptions = subscriptions
        self.standby = standby
        self.clock = clock
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/metrics") { _, _ in
            // A failover is when the scrape matters most: without a database the instance's own
            // figures are still served, and `database_up` says the rest are stale.
            let databaseUp = (try? await gauges.refresh(olderThan: Self.gaugeAge) { try await readGauges() }) != nil
            metrics.set("database_up", "1 when the last read of the database's figures succeeded (a primary answered).", databaseUp ? 1 : 0)
            recordStandby()
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer())))
        }
        return routes
    }

    /// Where the readers read and how far behind the standby is, as the monitor last measured.
    func recordStandby() {
        guard let status = standby() else { return }
        metrics.set(
            "readers_on_standby", "1 while the readers read the standby, 0 while they read the primary.",
            status.readingFrom == .standby ? 1 : 0)
        if let lag = status.lagSeconds {
            metrics.set("standby_lag_seconds", "How far the readers' standby is behind the primary, as last measured.", lag)
        }
    }

    /// Reads the cluster-wide figures into the registry's gauges.
    func readGauges() async throws {
        let statistics = try await statistics(clock.now())
        metrics.set(
            "events_appended_total", "Events appended so far (the last global position); rate() is the append rate.",
            Double(statistics.eventPosition))
        metrics.set(
            "feed_held_back_events", "Committed events hidden from every feed consumer behind a still-running older transaction.",
            Double(statistics.feedHeldBack))
        metrics.set("outbox_backlog_messages", "SMS and emails waiting for delivery.", Double(statistics.outboxBacklog))
        metrics.set("outbox_failed_messages", "SMS and emails given up on after the last retry.", Double(statistics.outboxFailed))
        metrics.set("purge_due_accounts", "Deleted accounts whose purge time has come.", Double(statistics.purgeDue))
        metrics.set("purged_accounts_total", "Accounts purged so far (data keys destroyed).", Double(statistics.purged))
        for subscription in try await subscriptions.list() {
            let labels = [("subscription", subscription.id.lowercased)]
            metrics.set(
                "webhook_lag_events", "Events a webhook subscription has not received yet (counted up to 100000).",
                Double(try await subscriptions.lag(subscription)), labels: labels)
            metrics.set(
                "webhook_consecutive_failures", "Failed pushes in a row; the subscription pauses at the limit.",
                Double(subscription.consecutiveFailures), labels: labels)
            metrics.set("webhook_paused", "1 when the subscription is paused.", subscription.status == .paused ? 1 : 0, labels: labels)
        }
    }
}

/// When the gauges were last read, and the read in flight: concurrent scrapes share one read.
actor GaugeCache {
    private var readAt: ContinuousClock.Instant?
    private var reading: Task<Void, any Error>?

    func refresh(olderThan age: Duration, _ read: @escaping @Sendable () async throws -> Void) async throws {
        if let reading { return try await reading.value }
        if let readAt, readAt.duration(to: .now) < age { return }
        let task = Task { try await read() }
        reading = task
        defer { reading = nil }
        try await task.value
        readAt = .now
    }
}
