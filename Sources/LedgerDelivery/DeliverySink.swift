import Foundation
import LedgerAccounts

/// Where outgoing SMS and email go.
public protocol DeliverySink: Sendable {
    /// Sends one message; throws when it was not accepted (a `DeliveryError` says whether to retry).
    func deliver(_ message: OutboxMessage) async throws

    /// The way out, as `/metrics` names it (`smtp`, `twilio`, `webhook`, `log`, `provider`).
    var provider: String { get }
}

extension DeliverySink {
    public var provider: String { "custom" }
}

/// A delivery that did not go through, with a reason that names no secret (and no
/// recipient), and whether trying again may help.
public struct DeliveryError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The relay or the network may take it later (SMTP 4xx, a network error, HTTP 429/5xx):
        /// retried with backoff for `LEDGER_DELIVERY_RETRY_SECONDS`.
        case temporary
        /// About the recipient or the message (another SMTP 5xx, a Twilio 4xx such as 21211):
        /// not retried.
        case permanent
        /// The operator's to fix (authentication or TLS at the relay): logged as a configuration
        /// error, and retried like a temporary failure meanwhile.
        case configuration
    }

    public let description: String
    public let kind: Kind

    public init(_ description: String, kind: Kind = .temporary) {
        self.description = description
        self.kind = kind
    }

    /// Whether trying again may help.
    public var isRetryable: Bool { kind != .permanent }
}
