import Foundation
import LedgerAccounts
import LedgerCore
import LedgerPostgres
import Logging
import ServiceLifecycle

/// Appends `hold.lapsed` for the session and booking holds that have started (within 5
/// seconds: docs/accounts.md, "Deletion and retention"), so consumers see a hold go as they saw it come. Every
/// instance runs it: `decide` appends nothing for a hold that has lapsed already, so two
/// instances never lapse one twice.
public struct HoldLapseWorker: Sendable {
    let client: PostgresClient
    let accounts: AccountService
    let clock: any LedgerClock
    let logger: Logger

    /// Accounts read per pass, at most.
    static let batchSize = 500

    public init(client: PostgresClient, accounts: AccountService, clock: any LedgerClock, logger: Logger = Logger(label: "ledger.holds")) {
        self.client = client
        self.accounts = accounts
        self.clock = clock
        self.logger = logger
    }

    /// Lapses the holds due now; returns how many lapsed. One account that fails leaves the
    /// others to lapse (it is tried again next pass).
    @discardableResult
    public func runOnce() async throws -> Int {
        let due = try await client.query(
            "SELECT account_id FROM hold_lapses WHERE lapses_at <= $1 ORDER BY lapses_at LIMIT $2",
            [.timestamp(clock.now()), .int(Int64(Self.batchSize))])
        var seen = Set<UUID>()
        var lapsed = 0
        for accountID in try due.rows.compactMap({ try $0.uuid(0) }) where seen.insert(accountID).inserted {
            do {
                lapsed += try await accounts.lapseHolds(accountID)
            } catch {
                logger.warning("holds could not lapse", metadata: ["account_id": "\(accountID.lowercased)", "error": "\(error)"])
            }
        }
        return lapsed
    }

    /// Passes every `interval` until cancelled.
    public func run(every interval: Duration) async {
        while !Task.isCancelled {
            do {
                try await runOnce()
            } catch {
                logger.warning("hold lapse pass failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}

extension HoldLapseWorker: Service {
    /// Runs with the service group until its graceful shutdown: a pass a second, so a hold
    /// lapses within 5 seconds of its start.
    public func run() async throws {
        await cancelWhenGracefulShutdown { await run(every: .seconds(1)) }
    }
}
