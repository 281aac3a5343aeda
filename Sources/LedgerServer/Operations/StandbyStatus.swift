import Foundation

/// Where the readers read now and why, as `/readyz` reports it under `replication`
/// (`StandbyMonitor.status`).
public struct StandbyStatus: Equatable, Sendable {
    public enum Source: String, Sendable {
        case primary, standby
    }

    /// Why the standby is not read.
    public enum Reason: String, Sendable {
        /// No measurement yet (the service has just started).
        case notMeasured = "not_measured"
        /// Further behind than `LEDGER_READ_MAX_LAG_SECONDS`.
        case tooFarBehind = "too_far_behind"
        /// Its replayed position could not be read.
        case standbyUnreachable = "standby_unreachable"
        /// The primary's position could not be read, so the standby's lag is unknown.
        case primaryUnreachable = "primary_unreachable"
        /// It replays no log: not a standby (or one promoted since), so nothing bounds how far it is from the primary.
        case notAStandby = "not_a_standby"
        /// The last measurement was within the bound, but no newer one came in time to keep it so.
        case measurementStale = "measurement_stale"
    }

    public var readingFrom: Source
    /// How far behind the standby was at the last measurement: at least this when it was
    /// behind every sample; nil when it could not be measured.
    public var lagSeconds: Double?
    /// Log bytes the standby had not replayed at the last measurement; nil when unmeasured.
    public var lagBytes: Int64?
    public var maxLagSeconds: Int
    /// Set when `readingFrom` is the primary.
    public var reason: Reason?

    public init(readingFrom: Source, lagSeconds: Double?, lagBytes: Int64?, maxLagSeconds: Int, reason: Reason?) {
        self.readingFrom = readingFrom
        self.lagSeconds = lagSeconds
        self.lagBytes = lagBytes
        self.maxLagSeconds = maxLagSeconds
        self.reason = reason
    }
}
