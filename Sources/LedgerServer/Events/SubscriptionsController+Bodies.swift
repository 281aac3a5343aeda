import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerEvents
import LedgerIdentity

/// `{url, types?, secret?, format?, after?}`.
struct CreateSubscriptionRequest: Decodable {
    let url: String
    let types: [String]?
    /// `whsec_…`; left out, one is made and answered once.
    let secret: String?
    /// `plain` (the default) or `cloudevents`.
    let format: String?
    let after: String?
}

/// A subscription as admins see it; its secret only in the answer that made it.
struct SubscriptionBody: Encodable {
    let subscription: WebhookSubscription
    let lag: Int64
    let secret: WebhookSecret?
    init(_ subscription: WebhookSubscription, lag: Int64, secret: WebhookSecret? = nil) {
        self.subscription = subscription
        self.lag = lag
        self.secret = secret
    }

    enum CodingKeys: String, CodingKey {
        case id, url, types, format, secret, status, createdAt = "created_at", cursor, lagEvents = "lag_events", pausedReason =
            "paused_reason"
        case consecutiveFailures = "consecutive_failures", nextAttemptAt = "next_attempt_at", lastError = "last_error"
        case lastErrorAt = "last_error_at", lastSuccessAt = "last_success_at", deliveredEvents = "delivered_events"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(subscription.id.lowercased, forKey: .id)
        try container.encode(subscription.url, forKey: .url)
        try container.encode(subscription.types, forKey: .types)
        try container.encode(subscription.format.rawValue, forKey: .format)
        try container.encodeIfPresent(secret?.text, forKey: .secret)
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
