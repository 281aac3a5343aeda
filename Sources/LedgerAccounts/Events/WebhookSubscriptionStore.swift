import Foundation
import LedgerEvents

/// What admins do with webhook subscriptions (`admin` keys): the HTTP layer asks, the store
/// (`WebhookSubscriptions` on PostgreSQL) answers. The pushes themselves are the dispatcher's.
public protocol WebhookSubscriptionStore: Sendable {
    /// A new subscription following the feed from `after` (default: from now on), and the secret
    /// made for it when none was given (answered this once); `ValidationFailure` for broken rules.
    func create(
        url: String, types: [String]?, secret: String?, format: String?, after: FeedCursor?
    ) async throws -> (subscription: WebhookSubscription, generatedSecret: WebhookSecret?)
    /// The live (not deleted) subscription with this id.
    func get(_ id: UUID) async throws -> WebhookSubscription?
    func list() async throws -> [WebhookSubscription]
    /// Stops deliveries for good; false when there was no such subscription.
    func delete(_ id: UUID) async throws -> Bool
    /// Pauses, or resumes; nil when there is no such subscription.
    func setStatus(_ id: UUID, _ status: WebhookSubscription.Status, reason: String?) async throws -> WebhookSubscription?
    /// A new secret, answered this once; the one it replaces keeps signing beside it for a while.
    func rotateSecret(_ id: UUID) async throws -> WebhookSecret?
    /// Events after the subscription's cursor that it has not received (counted up to a cap).
    func lag(_ subscription: WebhookSubscription) async throws -> Int64
}
