import Foundation
import LedgerEvents

/// A backend's webhook: events of `types` (every type when nil) are POSTed to `url` in commit
/// order, at least once, signed with the subscription's secret.
public struct WebhookSubscription: Sendable, Equatable {
    public enum Status: String, Sendable {
        case active
        /// Not pushed to until resumed: after sustained failure, or by an operator.
        case paused
    }

    /// What a push's body is: the service's own JSON, or a CloudEvents batch.
    public enum Format: String, Sendable, CaseIterable {
        case plain
        case cloudevents
    }

    public let id: UUID
    public let url: String
    public let types: [String]?
    public let createdAt: Date
    public let format: Format
    /// The last event the receiver acknowledged.
    public var cursor: FeedCursor
    public var status: Status
    public var pausedReason: String?
    public var consecutiveFailures: Int
    public var nextAttemptAt: Date
    public var lastError: String?
    public var lastErrorAt: Date?
    public var lastSuccessAt: Date?
    public var deliveredEvents: Int64
    /// The last event of a batch sent but not acknowledged: its retry ends there too, so it is
    /// the same batch (and carries the same `webhook-id`).
    public var retryThrough: FeedCursor?

    public init(
        id: UUID, url: String, types: [String]?, createdAt: Date, format: Format, cursor: FeedCursor, status: Status,
        pausedReason: String?, consecutiveFailures: Int, nextAttemptAt: Date, lastError: String?, lastErrorAt: Date?,
        lastSuccessAt: Date?, deliveredEvents: Int64, retryThrough: FeedCursor?
    ) {
        self.id = id
        self.url = url
        self.types = types
        self.createdAt = createdAt
        self.format = format
        self.cursor = cursor
        self.status = status
        self.pausedReason = pausedReason
        self.consecutiveFailures = consecutiveFailures
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.lastErrorAt = lastErrorAt
        self.lastSuccessAt = lastSuccessAt
        self.deliveredEvents = deliveredEvents
        self.retryThrough = retryThrough
    }

    /// The delivery policy: backoff after a failure, and when to give up and pause.
    public struct Policy: Sendable {
        /// Failures in a row after which the subscription is paused.
        public var pauseAfterFailures = 10
        /// The first retry's delay; each further failure doubles it, up to `maximumBackoff`.
        public var initialBackoff: TimeInterval = 1
        public var maximumBackoff: TimeInterval = 3600
        /// Events in one POST.
        public var batchSize = 100

        public init() {}

        /// The delay before the next attempt after `failures` failures in a row.
        public func backoff(afterFailures failures: Int) -> TimeInterval {
            min(maximumBackoff, initialBackoff * pow(2, Double(max(0, failures - 1))))
        }
    }
}
