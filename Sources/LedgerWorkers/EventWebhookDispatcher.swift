import AsyncHTTPClient
import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import Logging
import NIOCore
import ServiceLifecycle

/// Pushes the event feed to webhook subscriptions: each subscription's events in commit order,
/// in batches, at least once (its cursor moves only after a 2xx), signed (`WebhookSignature`).
/// A failure backs off exponentially; sustained failure pauses the subscription.
///
/// Any number of instances may run this: a subscription is served by the holder of its lease
/// only, so they never double-send under normal operation. (A sender that stalls past its
/// lease may overlap the next holder's first batch once; receivers drop event ids they have
/// already seen.)
public struct EventWebhookDispatcher: Sendable {
    let subscriptions: WebhookSubscriptions
    let store: EventStore
    let httpClient: HTTPClient
    let policy: WebhookSubscription.Policy
    let clock: any LedgerClock
    let logger: Logger
    /// The CloudEvents form of the events, for subscriptions in that format (`LEDGER_EVENT_SOURCE`).
    let cloudEvents: EventForm
    /// Clients pinned to the addresses checked for their hosts, reused between pushes.
    let pinnedClients = PinnedHTTPClients()
    /// This dispatcher's identity in leases.
    let owner = UUID()
    static let lease: TimeInterval = 60
    static let requestTimeout: TimeAmount = .seconds(10)

    public init(
        subscriptions: WebhookSubscriptions, store: EventStore, httpClient: HTTPClient = .outbound,
        policy: WebhookSubscription.Policy = .init(), clock: any LedgerClock, logger: Logger = Logger(label: "ledger.webhooks"),
        eventSource: String = EventDocument.defaultCloudEventSource
    ) {
        self.cloudEvents = .cloudEvents(source: eventSource)
        self.subscriptions = subscriptions
        self.store = store
        self.httpClient = httpClient
        self.policy = policy
        self.clock = clock
        self.logger = logger
    }

    /// Serves every due subscription until each is caught up or failed; returns the events delivered.
    @discardableResult
    public func runOnce() async throws -> Int {
        var delivered = 0
        var served = Set<UUID>()
        while let (subscription, secrets) = try await subscriptions.claimDue(owner: owner, lease: Self.lease, skipping: served) {
            served.insert(subscription.id)
            delivered += try await serve(subscription, secrets: secrets)
        }
        return delivered
    }

    /// Runs until cancelled: a pass on every commit this process makes or hears of, and at
    /// least every `interval` (retries fall due with time).
    public func run(every interval: Duration) async {
        while !Task.isCancelled {
            let generation = store.commitGeneration
            do {
                try await runOnce()
            } catch {
                // A pass cut short by shutdown is not a failure.
                if Task.isCancelled { break }
                logger.error("webhook pass failed", metadata: ["error": "\(type(of: error))"])
            }
            await store.waitForCommit(after: generation, timeout: interval)
        }
    }

    /// Sends batches until the subscription is caught up (lease released) or a POST fails.
    func serve(_ subscription: WebhookSubscription, secrets: [WebhookSecret]) async throws -> Int {
        var cursor = subscription.cursor
        var delivered = 0
        var secrets = secrets
        // A batch that was not acknowledged goes again as it was, so its retry is the same message
        // (`webhook-id`), however many events came since.
        var retryThrough = subscription.retryThrough
        while !Task.isCancelled {
            let page = try await store.readAll(after: cursor, limit: policy.batchSize, types: subscription.types)
            let events = retryThrough.map { end in page.events.filter { $0.cursor <= end } } ?? page.events
            retryThrough = nil
            guard let last = events.last else { break }
            guard try await subscriptions.recordSending(subscription.id, owner: owner, through: last.cursor) else { return delivered }
            do {
                try await post(events, to: subscription, secrets: secrets)
            } catch {
                let reason = (error as? WebhookPushError)?.description ?? "the request failed: \(type(of: error))"
                logger.warning("webhook push failed", metadata: ["subscription": "\(subscription.id)", "reason": "\(reason)"])
                try await subscriptions.recordFailure(subscription.id, owner: owner, error: reason, policy: policy)
                return delivered
            }
            // The next batch signs with the secrets of now (a rotation, an overlap ended), and none
            // goes to a subscription deleted or paused meanwhile.
            guard
                let current = try await subscriptions.recordDelivered(
                    subscription.id, owner: owner, through: last.cursor, count: events.count, lease: Self.lease)
            else {
                // Paused or deleted meanwhile (or the lease lost): a resume must not wait out the lease.
                try await subscriptions.release(subscription.id, owner: owner)
                return delivered
            }
            secrets = current
            delivered += events.count
            cursor = last.cursor
        }
        try await subscriptions.release(subscription.id, owner: owner)
        return delivered
    }

    /// The body of a push: `{"subscription_id": …, "sent_at": …, "events": [ … as GET /events … ]}`
    /// (`sent_at` is under the signature, so a receiver can refuse a captured request replayed
    /// later), or in the CloudEvents format a batch of CloudEvents, with its media type.
    func body(_ events: [RecordedEvent], for subscription: WebhookSubscription) -> (bytes: [UInt8], contentType: String) {
        if subscription.format == .cloudevents {
            return (cloudEvents.jsonArray(events), "application/cloudevents-batch+json")
        }
        var body = Array(#"{"subscription_id":""#.utf8)
        body.append(contentsOf: subscription.id.lowercased.utf8)
        body.append(contentsOf: #"","sent_at":""#.utf8)
        body.append(contentsOf: RFC3339.format(clock.now()).utf8)
        body.append(contentsOf: #"","events":"#.utf8)
        body.append(contentsOf: EventDocument.jsonArray(events))
        body.append(UInt8(ascii: "}"))
        return (body, "application/json")
    }

    /// POSTs one batch, signed both ways: Standard Webhooks (`webhook-*`, under every live secret)
    /// and `X-Ledger-Signature` (under the current one).
    func post(_ events: [RecordedEvent], to subscription: WebhookSubscription, secrets: [WebhookSecret]) async throws {
        let (body, contentType) = body(events, for: subscription)
        // Clients earlier pushes replaced (a host moved) or evicted: pushes go one at a time,
        // so none of them is in use now.
        await pinnedClients.shutdownRetired()
        let httpClient: HTTPClient
        switch await subscriptions.destination(of: subscription.url) {
        case .refused(let reason): throw WebhookPushError(description: "refused: \(reason)")
        case .unresolved: throw WebhookPushError(description: "refused: The URL's host does not resolve.")
        case .unchecked: httpClient = self.httpClient
        case .pinned(let host, let address):
            // The connection goes to the address just checked, whatever the name resolves to now.
            httpClient = pinnedClients.client(host: host, address: address)
        }
        var request = HTTPClientRequest(url: subscription.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.headers.add(name: "X-Ledger-Subscription-Id", value: subscription.id.lowercased)
        request.headers.add(name: "X-Ledger-Delivery-Id", value: UUID().lowercased)
        let messageID = StandardWebhookSignature.messageID(
            subscription: subscription.id, firstEvent: events.first?.eventID ?? subscription.id,
            lastEvent: events.last?.eventID ?? subscription.id)
        let timestamp = Int64(clock.now().timeIntervalSince1970)
        for header in StandardWebhookSignature.headers(id: messageID, timestamp: timestamp, body: body, secrets: secrets) {
            request.headers.add(name: header.name, value: header.value)
        }
        request.headers.add(name: WebhookSignature.headerName, value: WebhookSignature.header(secret: secrets[0].text, body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await httpClient.execute(request, timeout: Self.requestTimeout)
        // Read (a bounded part of) the answer so the connection can be reused.
        _ = try? await response.body.collect(upTo: 64 * 1024)
        guard (200..<300).contains(response.status.code) else {
            throw WebhookPushError(description: "the endpoint answered \(response.status.code)")
        }
    }
}

/// A push the receiver did not acknowledge.
struct WebhookPushError: Error, CustomStringConvertible {
    let description: String
}

extension EventWebhookDispatcher: Service {
    /// Runs with the service group until its graceful shutdown (every second at the latest).
    public func run() async throws {
        await cancelWhenGracefulShutdown { await run(every: .seconds(1)) }
        await pinnedClients.shutdown()
    }
}
