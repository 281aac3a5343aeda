import Foundation

/// What operators watch, read from the database so every instance reports the same
/// cluster-wide figures (`/metrics`).
public struct OperationalStatistics: Sendable {
    /// The last global position handed out (appends so far; `rate()` of it is the append rate).
    public var eventPosition: Int64 = 0
    /// Committed events the feed does not show yet because an older transaction still runs:
    /// how far every consumer is held back.
    public var feedHeldBack: Int64 = 0
    /// Messages waiting for delivery, and those given up on.
    public var outboxBacklog: Int64 = 0
    public var outboxFailed: Int64 = 0
    /// Deleted accounts whose purge time has come, and accounts purged so far.
    public var purgeDue: Int64 = 0
    public var purged: Int64 = 0

    public init() {}
}
