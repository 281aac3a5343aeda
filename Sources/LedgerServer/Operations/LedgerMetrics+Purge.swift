import Foundation

extension LedgerMetrics {
    /// The purge as this instance last saw it (`PurgeLeadership` reports after every tick):
    /// whether it runs the purge and the retention sweep now, and how long the oldest due purge
    /// has waited; nil keeps the last figure (the schedule could not be read).
    ///
    /// Set by the purge's own ticks rather than read at each scrape: leadership is this
    /// process's own state, and the age comes with it at no extra cost.
    public func recordPurge(leading: Bool, oldestDueSeconds: Double?) {
        set("purge_leader", "1 on the instance that runs the purge and the retention sweep now, else 0.", leading ? 1 : 0)
        if let oldestDueSeconds {
            set(
                "purge_oldest_due_seconds", "Seconds the longest-waiting due purge has waited since its purge_after; 0 when none is due.",
                oldestDueSeconds)
        }
    }
}
