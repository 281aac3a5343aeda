import Foundation
import LedgerAccounts
import LedgerCore
import LedgerPostgres
import Logging

/// Delivers the outbox: claims due messages with a short lease (one autocommit statement,
/// `FOR UPDATE SKIP LOCKED`, so several instances never take the same message and no
/// transaction stays open during the HTTP call), sends them, and then either blanks their
/// secrets or schedules a retry with exponential backoff; after `maximumAttempts` a message
/// is marked failed with its last error.
public struct DeliveryDispatcher: Sendable {
    let client: PostgresClient
    let sink: any DeliverySink
    let clock: any LedgerClock
    let logger: Logger
    public var maximumAttempts = 8
    public var batchSize = 20
    /// How long a claimed message is hidden from other dispatchers.
    public var lease: TimeInterval = 60

    public init(client: PostgresClient, sink: any DeliverySink, clock: any LedgerClock, logger: Logger = Logger(label: "ledger.delivery")) {
        self.client = client
        self.sink = sink
        self.clock = clock
        self.logger = logger
    }

    /// The backoff before try `attempt + 1`: 2, 4, 8 … seconds, at most an hour.
    public static func backoff(afterAttempt attempt: Int) -> TimeInterval {
        min(3600, pow(2, Double(min(attempt, 20))))
    }

    /// One pass over what is due; returns how many messages were delivered.
    @discardableResult
    public func runOnce() async throws -> Int {
        let now = clock.now()
        let claimed = try await client.query(
            """
            UPDATE outbox SET next_attempt_at = $2, attempts = attempts + 1
            WHERE id IN (SELECT id FROM outbox
                         WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $1
                         ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
            RETURNING id, channel, recipient, template, code, token, link, locale, attempts
            """,
            [.timestamp(now), .timestamp(now.addingTimeInterval(lease)), .int(Int64(batchSize))])
        var delivered = 0
        for row in claimed.rows {
            guard let id = try row.uuid(0), let channel = row.string(1).flatMap(OutboxMessage.Channel.init(rawValue:)),
                  let template = row.string(3), let attempts = try row.int(8)
            else { continue }
            let message = OutboxMessage(
                id: id, channel: channel, to: row.string(2) ?? "", template: template, code: row.string(4),
                link: row.string(6), token: row.string(5), locale: row.string(7) ?? "en")
            do {
                try await sink.deliver(message)
                try await client.query(
                    "UPDATE outbox SET delivered_at = $2, code = NULL, token = NULL, link = NULL, last_error = NULL WHERE id = $1",
                    [.uuid(id), .timestamp(clock.now())])
                delivered += 1
            } catch {
                let reason = (error as? DeliveryError)?.description ?? "delivery failed (\(type(of: error)))"
                if attempts >= Int64(maximumAttempts) {
                    try await client.query(
                        "UPDATE outbox SET failed_at = $2, last_error = $3, code = NULL, token = NULL, link = NULL WHERE id = $1",
                        [.uuid(id), .timestamp(clock.now()), .text(reason)])
                    logger.error("delivery gave up", metadata: ["id": "\(id)", "attempts": "\(attempts)", "error": "\(reason)"])
                } else {
                    try await client.query(
                        "UPDATE outbox SET next_attempt_at = $2, last_error = $3 WHERE id = $1",
                        [.uuid(id), .timestamp(clock.now().addingTimeInterval(Self.backoff(afterAttempt: Int(attempts)))), .text(reason)])
                    logger.warning("delivery failed; will retry", metadata: ["id": "\(id)", "attempts": "\(attempts)", "error": "\(reason)"])
                }
            }
        }
        return delivered
    }

    /// Runs passes until the task is cancelled, every `interval`.
    public func run(interval: Duration = .milliseconds(500)) async {
        while !Task.isCancelled {
            do {
                try await runOnce()
            } catch {
                logger.warning("delivery pass failed", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
