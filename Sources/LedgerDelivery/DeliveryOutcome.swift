/// What became of one try of one message, as `/metrics` counts it
/// (`ledger_deliveries_total{channel, provider, outcome}`).
public enum DeliveryOutcome: String, Sendable, CaseIterable {
    /// The way out accepted it.
    case sent
    /// It failed and will be tried again.
    case retrying
    /// It was given up: a permanent failure, or its retries ran out.
    case failed
}

/// Told of every try's outcome, by channel (`sms`, `email`, `provider`) and the way out.
public typealias DeliveryOutcomeObserver = @Sendable (_ channel: String, _ provider: String, _ outcome: DeliveryOutcome) -> Void
