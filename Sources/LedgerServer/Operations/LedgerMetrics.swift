import Foundation
import Prometheus
import Synchronization

/// The service's Prometheus registry: request latency by route, written by the request
/// middleware, and the operational gauges `/metrics` refreshes on every scrape.
///
/// Owned by `LedgerServices` rather than bootstrapped globally, so several instances in one
/// process (the tests run two) keep their own figures.
public final class LedgerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    static let latencyBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
        .seconds(5), .seconds(10), .seconds(30),
    ]

    public init() {}

    /// One answered request. `route` is the matched route's pattern (`/accounts/{id}/events`),
    /// never the raw path, so ids and tokens never become label values.
    func observeRequest(route: String, method: String, status: Int, duration: Duration) {
        let key = RequestSeries(route: route, method: method, status: status)
        if let histogram = requestHistograms.withLock({ $0[key] }) { return histogram.record(duration) }
        let histogram = registry.makeDurationHistogram(
            descriptor: .init(
                namespace: "ledger", metricName: "http_request_duration", unitName: "seconds",
                helpText: "Time to answer a request, by route, method and status."),
            labels: [("route", route), ("method", method), ("status", String(status))],
            buckets: Self.latencyBuckets)
        requestHistograms.withLock { $0[key] = histogram }
        histogram.record(duration)
    }

    /// The histograms already made, by their labels: the registry's own lookup builds the
    /// descriptor and label strings first, on every request.
    private let requestHistograms = Mutex<[RequestSeries: DurationHistogram]>([:])

    private struct RequestSeries: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    /// One try of one message (`ledger_deliveries_total{channel, provider, outcome}`; outcome
    /// `sent`, `retrying` or `failed`).
    public func countDelivery(channel: String, provider: String, outcome: String) {
        registry.makeCounter(
            descriptor: .init(
                namespace: "ledger", metricName: "deliveries_total", unitName: "",
                helpText: "Tries of outgoing SMS, emails and revocations."),
            labels: [("channel", channel), ("provider", provider), ("outcome", outcome)]
        ).increment()
    }

    /// Sets a gauge (created on first use).
    func set(_ name: String, _ help: String, _ value: Double, labels: [(String, String)] = []) {
        registry.makeGauge(descriptor: .init(namespace: "ledger", metricName: name, unitName: "", helpText: help), labels: labels)
            .set(value)
    }
}
