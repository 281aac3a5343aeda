import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerEventStore
import LedgerIdentity

/// Webhook subscriptions (`admin`): create, list, read with lag and failure status, pause,
/// resume and delete. The pushes themselves are `EventWebhookDispatcher`'s.
public struct SubscriptionsController: Sendable {
    let subscriptions: WebhookSubscriptions
    let keys: APIKeyGuard

    public init(subscriptions: WebhookSubscriptions, keys: APIKeyGuard) {
        self.subscriptions = subscriptions
        self.keys = keys
    }

    static let notFound = APIError(.notFound, .notFound, "No such subscription.")

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.post("/subscriptions") { request, context in
            try await keys.authorize(request, scope: .admin)
            let body = try await request.decodeJSON(CreateSubscriptionRequest.self, context: context)
            var after: FeedCursor?
            if let token = body.after {
                do { after = try FeedCursor(token: token) } catch {
                    throw APIError(.badRequest, .init("invalid_cursor"), "The cursor is not one this service issued.")
                }
            }
            let created = try await subscriptions.create(url: body.url, types: body.types, secret: body.secret, after: after)
            return try JSONResponse(.created, encoding: SubscriptionBody(created, lag: try await subscriptions.lag(created)))
        }
        routes.get("/subscriptions") { request, _ in
            try await keys.authorize(request, scope: .admin)
            var bodies: [SubscriptionBody] = []
            for subscription in try await subscriptions.list() {
                bodies.append(SubscriptionBody(subscription, lag: try await subscriptions.lag(subscription)))
            }
            return try JSONResponse(.ok, encoding: ["subscriptions": bodies])
        }
        routes.get("/subscriptions/:id") { request, context in
            try await keys.authorize(request, scope: .admin)
            guard let subscription = try await subscriptions.get(try Self.id(context)) else { throw Self.notFound }
            return try JSONResponse(.ok, encoding: SubscriptionBody(subscription, lag: try await subscriptions.lag(subscription)))
        }
        routes.delete("/subscriptions/:id") { request, context in
            try await keys.authorize(request, scope: .admin)
            guard try await subscriptions.delete(try Self.id(context)) else { throw Self.notFound }
            return Response(status: .noContent)
        }
        routes.post("/subscriptions/:id/pause") { request, context in
            try await setStatus(request, context, .paused)
        }
        routes.post("/subscriptions/:id/resume") { request, context in
            try await setStatus(request, context, .active)
        }
        return routes
    }

    func setStatus(_ request: Request, _ context: LedgerRequestContext, _ status: WebhookSubscription.Status) async throws -> JSONResponse {
        try await keys.authorize(request, scope: .admin)
        let reason = status == .paused ? "operator" : nil
        guard let subscription = try await subscriptions.setStatus(try Self.id(context), status, reason: reason) else {
            throw Self.notFound
        }
        return try JSONResponse(.ok, encoding: SubscriptionBody(subscription, lag: try await subscriptions.lag(subscription)))
    }

    static func id(_ context: LedgerRequestContext) throws -> UUID {
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw notFound }
        return id
    }
}

/// `{url, types?, secret, after?}`.
struct CreateSubscriptionRequest: Decodable {
    let url: String
    let types: [String]?
    let secret: String
    let after: String?
}

/// A subscription as admins see it; never its secret.
struct SubscriptionBody: Encodable {
    let subscription: WebhookSubscription
    let lag: Int64
    init(_ subscription: WebhookSubscription, lag: Int64) {
        self.subscription = subscription
        self.lag = lag
    }

    enum CodingKeys: String, CodingKey {
        case id, url, types, status, createdAt = "created_at", cursor, lagEvents = "lag_events", pausedReason = "paused_reason"
        case consecutiveFailures = "consecutive_failures", nextAttemptAt = "next_attempt_at", lastError = "last_error"
        case lastErrorAt = "last_error_at", lastSuccessAt = "last_success_at", deliveredEvents = "delivered_events"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(subscription.id.lowercased, forKey: .id)
        try container.encode(subscription.url, forKey: .url)
        try container.encode(subscription.types, forKey: .types)
        try container.encode(subscription.status.rawValue, forKey: .status)
        try container.encode(subscription.pausedReason, forKey: .pausedReason)
        try container.encode(RFC3339.format(subscription.createdAt), forKey: .createdAt)
        try container.encode(subscription.cursor.token, forKey: .cursor)
        try container.encode(lag, forKey: .lagEvents)
        try container.encode(subscription.consecutiveFailures, forKey: .consecutiveFailures)
        try container.encode(RFC3339.format(subscription.nextAttemptAt), forKey: .nextAttemptAt)
        try container.encode(subscription.lastError, forKey: .lastError)
        try container.encode(subscription.lastErrorAt.map(RFC3339.format), forKey: .lastErrorAt)
        try container.encode(subscription.lastSuccessAt.map(RFC3339.format), forKey: .lastSuccessAt)
        try container.encode(subscription.deliveredEvents, forKey: .deliveredEvents)
    }
}
