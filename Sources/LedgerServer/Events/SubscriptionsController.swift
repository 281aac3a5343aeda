import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerEvents
import LedgerIdentity

/// Webhook subscriptions (`admin`): create, list, read with lag and failure status, pause,
/// resume and delete. The pushes themselves are `EventWebhookDispatcher`'s.
public struct SubscriptionsController: Sendable {
    let subscriptions: any WebhookSubscriptionStore
    let keys: APIKeyGuard

    public init(subscriptions: any WebhookSubscriptionStore, keys: APIKeyGuard) {
        self.subscriptions = subscriptions
        self.keys = keys
    }

    static let notFound = APIError(.notFound, .notFound, "No such subscription.")
    /// Answers that carry a secret are not kept by caches on the way.
    static let noStore: HTTPFields = [.cacheControl: "no-store"]

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
            let (created, generated) = try await subscriptions.create(
                url: body.url, types: body.types, secret: body.secret, format: body.format, after: after)
            // The secret is answered this once: a lag that cannot be counted must not lose it.
            let lag = (try? await subscriptions.lag(created)) ?? 0
            return try JSONResponse(.created, encoding: SubscriptionBody(created, lag: lag, secret: generated), headers: Self.noStore)
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
        routes.post("/subscriptions/:id/rotate-secret") { request, context in
            try await keys.authorize(request, scope: .admin)
            guard let secret = try await subscriptions.rotateSecret(try Self.id(context)) else { throw Self.notFound }
            return try JSONResponse(.ok, encoding: ["secret": secret.text], headers: Self.noStore)
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
