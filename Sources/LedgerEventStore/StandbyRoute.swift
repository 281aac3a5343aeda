import Foundation
import LedgerCore
import LedgerPostgres
import Synchronization

/// Where a reading store (`EventStore.reading(through:)`) sends its queries: the standby while
/// it is known to be within the lag bound (`LEDGER_READ_MAX_LAG_SECONDS`), else the primary
/// (docs/architecture.md "Event store rules", "Readers on a standby").
///
/// Whoever measures the lag grants the standby until an instant; a read only compares the
/// clock with it (one atomic load, no query). The grant runs out by itself, so a measurement
/// that stops coming (a hung standby, a stalled monitor) sends the reads back to the primary.
public final class StandbyRoute: Sendable {
    public let primary: PostgresClient
    public let standby: PostgresClient
    let clock: any LedgerClock
    /// Milliseconds since 1970 on `clock` until which the standby is read; `.min`: not at all.
    private let standbyUntil = Atomic<Int64>(.min)

    /// Starts on the primary: a standby is read only once it is measured close enough.
    public init(primary: PostgresClient, standby: PostgresClient, clock: any LedgerClock) {
        self.primary = primary
        self.standby = standby
        self.clock = clock
    }

    /// Reads go to the standby until `deadline`, included (nil: from now on, to the primary).
    public func readStandby(until deadline: Date?) {
        standbyUntil.store(deadline.map(Self.milliseconds) ?? .min, ordering: .releasing)
    }

    /// Whether a read now goes to the standby.
    public var readsStandby: Bool {
        Self.milliseconds(clock.now()) <= standbyUntil.load(ordering: .acquiring)
    }

    /// The database a read made now goes to.
    public var client: PostgresClient { readsStandby ? standby : primary }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
