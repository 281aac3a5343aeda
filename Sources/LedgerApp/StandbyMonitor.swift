import Foundation
import LedgerCore
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import Logging
import ServiceLifecycle
import Synchronization

/// Measures how far the readers' standby (`LEDGER_READ_DATABASE_URL`) is behind the primary
/// and grants it to `route` only while that is within `maxLagSeconds`
/// (`LEDGER_READ_MAX_LAG_SECONDS`; docs/architecture.md "Readers on a standby").
///
/// A lagging standby still holds what the primary has purged since (an account's data key
/// among it), so past the bound the reads go to the primary. Each `sample()` records the
/// primary's `pg_current_wal_lsn()` (`WALSamples`), then reads the standby's
/// `pg_last_wal_replay_lsn()`; the lag is the age of the newest sample the standby has
/// replayed. A standby that cannot be read, or that replays nothing, counts as too far behind.
/// A grant lasts only until the lag could have passed the bound, so a monitor that stops
/// measuring sends the reads back to the primary.
public final class StandbyMonitor: Sendable {
    public let route: StandbyRoute
    public let maxLagSeconds: Int
    /// How long after the primary was last seen a proven absence may keep renewing the grant
    /// (`LEDGER_READ_FAILOVER_SECONDS`).
    public let failoverSeconds: Int
    /// How many hosts the primary's URL lists: a proof of absence must name an attempt at each.
    let primaryHosts: Int
    /// Where the standby is measured: a pool of its own on the readers' URL, when given, and the
    /// readers' pool is then pinned to the server each measurement was taken on
    /// (`PostgresClient.requireServer`); else the readers' pool itself.
    let measuring: PostgresClient
    let pinsReaders: Bool
    /// How often `run` samples: also the resolution of a lag.
    let interval: Duration
    let clock: any LedgerClock
    let logger: Logger
    private let state: Mutex<State>

    struct State {
        var samples: WALSamples
        var lagSeconds: Double?
        var lagBytes: Int64?
        /// Why the last measurement withdrew the standby; nil when it granted it.
        var reason: StandbyStatus.Reason? = .notMeasured
        /// When a measurement first found no primary since the last that found one.
        var primaryLostAt: Date?
        /// When the readers' pool was last renewed for want of a standby.
        var renewedAt: Date?
    }

    /// What a measurement does to the standby's grant.
    enum GrantChange {
        /// Reads go to the primary from now on.
        case withdraw
        /// Reads go to the standby until then.
        case until(Date)
        /// The last grant stands and runs out as it would have.
        case keep
    }

    public init(
        route: StandbyRoute, maxLagSeconds: Int, failoverSeconds: Int = 30, measuring: PostgresClient? = nil,
        interval: Duration = .seconds(1), clock: any LedgerClock, logger: Logger = Logger(label: "ledger.standby")
    ) {
        self.measuring = measuring ?? route.standby
        self.pinsReaders = measuring != nil
        self.route = route
        self.maxLagSeconds = maxLagSeconds
        self.failoverSeconds = failoverSeconds
        self.primaryHosts = ConnectionTarget(url: route.primary.configuration.url)?.hosts.count ?? 1
        self.interval = interval
        self.clock = clock
        self.logger = logger
        // A standby behind every kept sample is at least the bound behind.
        let span = TimeInterval(maxLagSeconds) + 2 * interval.inSeconds
        self.state = Mutex(State(samples: WALSamples(span: span)))
        if pinsReaders { route.standby.onServerMismatch { [weak self] server in self?.readersReached(server) } }
    }

    /// A readers' connection reached another server than the one measured: reads go to the
    /// primary, and the next measurement is taken on a fresh connection, where libpq goes now.
    private func readersReached(_ server: String) {
        route.readStandby(until: nil)
        measuring.renewConnections()
        let first = state.withLock { state in
            defer { state.reason = .notMeasured }
            return state.reason != .notMeasured
        }
        if first { logger.warning("a readers' connection reached a server not measured: they read the primary until it is") }
    }

    /// The measured standby's replayed position (by `replayQuery`) and the server it is.
    private func measureStandby(_ replayQuery: String) async throws -> (position: WALPosition?, server: String?) {
        let row = try await measuring.query("SELECT (\(replayQuery))::text, \(PostgresClient.serverIdentityExpression)").rows.first
        return (row?.string(0).flatMap(WALPosition.init), row?.string(1))
    }

    /// One measurement: samples the primary, reads the standby, and grants or withdraws it.
    @discardableResult
    public func sample() async -> StandbyStatus {
        let sampledAt = clock.now()
        let primaryPosition: WALPosition
        do {
            guard let position = try await Self.position("pg_current_wal_lsn()", on: route.primary) else {
                return await sampleWithoutPrimary(at: sampledAt, proven: false)
            }
            primaryPosition = position
        } catch {
            let proven = (error as? PostgresError)?.showsNoServerCanCommit(hosts: primaryHosts) == true
            return await sampleWithoutPrimary(at: sampledAt, proven: proven)
        }
        let samples = state.withLock {
            $0.samples.record(primaryPosition, at: sampledAt)
            $0.primaryLostAt = nil
            return $0.samples
        }
        let replayed: WALPosition?
        let server: String?
        do {
            (replayed, server) = try await measureStandby(Self.replayedIfStandby)
        } catch {
            return settle(lag: nil, bytes: nil, reason: .standbyUnreachable, grant: .withdraw)
        }
        guard let replayed else {
            renewStandbyConnections(at: sampledAt)
            return settle(lag: nil, bytes: nil, reason: .notAStandby, grant: .withdraw)
        }
        // The standby answered after `sampledAt`: its lag is read at the answer, the longer one.
        let measuredAt = clock.now()
        let bytes = primaryPosition.bytes(since: replayed)
        let lag = samples.lag(of: replayed, at: measuredAt)
        if let lag, lag <= Double(maxLagSeconds) {
            // The readers read only the server measured; then, replay stopped now, it would pass
            // the bound then: a grant for no longer.
            if pinsReaders { route.standby.requireServer(server) }
            return settle(
                lag: lag, bytes: bytes, reason: nil, grant: .until(measuredAt.addingTimeInterval(Double(maxLagSeconds) - lag)))
        }
        return settle(lag: lag ?? samples.reach(at: measuredAt), bytes: bytes, reason: .tooFarBehind, grant: .withdraw)
    }

    /// A standby's replayed position; NULL on a server not in recovery. A standby promoted since
    /// (by a failover) replays no more, though it still names the last position it replayed:
    /// only one in recovery counts.
    static let replayedIfStandby = "CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() END"

    /// The replayed position of a standby that has replayed everything it received; NULL otherwise.
    static let replayedAllReceived = """
        CASE WHEN pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= coalesce(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()) \
        THEN pg_last_wal_replay_lsn() END
        """

    /// A measurement while no primary answers (a failover under way). When the failure shows
    /// that no listed server can commit (`proven`: each refused, or is a standby), what the
    /// standby lacks cannot grow: a standby that has replayed all it received, up to the newest
    /// position the primary was seen at, lacks at most what the primary wrote between that sample
    /// and the first one that found it gone. Within the bound, the grant is renewed, but never
    /// past `failoverSeconds` after the primary was last seen: a refusal is libpq's view from
    /// here, and a firewall that rejects looks the same. Otherwise (a timeout may be a partition
    /// from a primary that still commits and purges) the grant the last measurement gave stands
    /// and runs out as sized (docs/operations.md "High availability on Patroni").
    private func sampleWithoutPrimary(at sampledAt: Date, proven: Bool) async -> StandbyStatus {
        let (newest, lostAt) = state.withLock { state in
            if state.primaryLostAt == nil { state.primaryLostAt = sampledAt }
            return (state.samples.samples.last, state.primaryLostAt ?? sampledAt)
        }
        guard proven, let newest, let measured = try? await measureStandby(Self.replayedAllReceived),
            let replayed = measured.position, replayed >= newest.position,
            !pinsReaders || measured.server == route.standby.requiredServer
        else {
            return settle(lag: nil, bytes: nil, reason: .primaryUnreachable, grant: .keep)
        }
        let missing = max(0, lostAt.timeIntervalSince(newest.at))
        guard missing <= Double(maxLagSeconds) else {
            return settle(lag: nil, bytes: nil, reason: .primaryUnreachable, grant: .keep)
        }
        // Renewed by every measurement (one that stops coming lets it run out), from when this
        // one began, and never past the failover allowance.
        let until = min(
            sampledAt.addingTimeInterval(Double(maxLagSeconds) - missing), newest.at.addingTimeInterval(Double(failoverSeconds)))
        guard until > clock.now() else {
            return settle(lag: nil, bytes: nil, reason: .primaryUnreachable, grant: .keep)
        }
        return settle(lag: missing, bytes: nil, reason: .primaryUnreachable, grant: .until(until))
    }

    /// The readers' server is no standby now (promoted by a failover): their pool is renewed, at
    /// most every `renewalInterval`, so a `prefer-standby` URL finds a standby again.
    private func renewStandbyConnections(at now: Date) {
        let due = state.withLock { state in
            guard state.renewedAt.map({ now.timeIntervalSince($0) >= Self.renewalInterval }) ?? true else { return false }
            state.renewedAt = now
            return true
        }
        guard due else { return }
        logger.warning("the readers' server is no standby now: reconnecting the readers")
        route.standby.renewConnections()
        measuring.renewConnections()
    }

    static let renewalInterval: TimeInterval = 10

    /// Where the readers read now and why.
    public func status() -> StandbyStatus {
        let readsStandby = route.readsStandby
        return state.withLock { state in
            StandbyStatus(
                readingFrom: readsStandby ? .standby : .primary, lagSeconds: state.lagSeconds, lagBytes: state.lagBytes,
                maxLagSeconds: maxLagSeconds, reason: readsStandby ? nil : state.reason ?? .measurementStale)
        }
    }

    /// Records a measurement and points the route by it; says so in the log when the readers move.
    private func settle(lag: Double?, bytes: Int64?, reason: StandbyStatus.Reason?, grant: GrantChange) -> StandbyStatus {
        let wasReadingStandby = route.readsStandby
        let previousReason = state.withLock { state in
            defer { (state.lagSeconds, state.lagBytes, state.reason) = (lag, bytes, reason) }
            return state.reason
        }
        switch grant {
        case .withdraw: route.readStandby(until: nil)
        case .until(let deadline): route.readStandby(until: deadline)
        case .keep: break
        }
        let current = status()
        if reason == .primaryUnreachable && current.readingFrom == .standby {
            if reason != previousReason {
                logger.warning("the primary cannot be reached: readers keep the standby within its bound")
            }
        } else if wasReadingStandby && current.readingFrom == .primary || reason != nil && reason != previousReason {
            logger.warning(
                "readers bypass the standby: they read the primary",
                metadata: [
                    "reason": "\(reason?.rawValue ?? "none")", "lag_seconds": "\(lag.map { String($0) } ?? "unknown")",
                    "max_lag_seconds": "\(maxLagSeconds)",
                ])
        } else if !wasReadingStandby && current.readingFrom == .standby {
            logger.info("readers read the standby again", metadata: ["lag_seconds": "\(lag.map { String($0) } ?? "unknown")"])
        }
        return current
    }

    /// A log position a query gives; nil when it gives NULL (a standby's replay function on a primary).
    private static func position(_ function: String, on client: PostgresClient) async throws -> WALPosition? {
        let rows = try await client.query("SELECT \(function)::text")
        return rows.rows.first?.string(0).flatMap(WALPosition.init)
    }
}

extension StandbyMonitor: Service {
    /// Samples every `interval` with the service group, until its graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.sample()
                try? await Task.sleep(for: self.interval)
            }
        }
        // Its own measuring pool, when it was given one, goes with it.
        if pinsReaders { await measuring.shutdown() }
    }
}
