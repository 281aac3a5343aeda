import Foundation
import LedgerAccounts
import LedgerCore
import LedgerDelivery
import LedgerEventStore
import LedgerPostgres
import Logging
import ServiceLifecycle

/// Delivers the outbox: claims due messages with a short lease (one autocommit statement,
/// `FOR UPDATE SKIP LOCKED`, so several instances never take the same message and no
/// transaction stays open during the HTTP call), sends them, and then either blanks their
/// secrets or schedules a retry with exponential backoff; after `maximumAttempts` a message
/// is marked failed with its last error. A batch's messages are sent concurrently, and the
/// delivered ones are marked in one statement. SMS and email go to `sink`; provider token
/// revocations to `revocations`, never to the delivery webhook.
public struct DeliveryDispatcher: Sendable {
    let client: PostgresClient
    let sink: any DeliverySink
    /// Revokes provider tokens; nil: such messages fail (and are retried) until one is configured.
    let revocations: (any DeliverySink)?
    let clock: any LedgerClock
    let logger: Logger
    /// When set, a commit (which is when messages are written) wakes the dispatcher at once
    /// instead of at the next poll.
    let store: EventStore?
    public var maximumAttempts = 8
    /// A provider revocation is tried for a week (hourly once the backoff is at its longest):
    /// a grant must end at the provider, whatever its outage or an operator's mistake.
    public var maximumRevocationAttempts = 180
    public var batchSize = 32
    /// How long a claimed message is hidden from other dispatchers.
    public var lease: TimeInterval = 60

    public init(
        client: PostgresClient, sink: any DeliverySink, revocations: (any DeliverySink)? = nil, clock: any LedgerClock,
        store: EventStore? = nil, logger: Logger = Logger(label: "ledger.delivery")
    ) {
        self.client = client
        self.sink = sink
        self.revocations = revocations
        self.clock = clock
        self.store = store
        self.logger = logger
    }

    /// The backoff before try `attempt + 1`: 2, 4, 8 … seconds, at most an hour.
    public static func backoff(afterAttempt attempt: Int) -> TimeInterval {
        min(3600, pow(2, Double(min(attempt, 20))))
    }

    /// One pass over what is due; returns how many messages were delivered.
    @discardableResult
    public func runOnce() async throws -> Int {
        try await pass().delivered
    }

    private func pass() async throws -> (claimed: Int, delivered: Int) {
        let now = clock.now()
        // Both outbox statements are PL/pgSQL functions (schema 013, 014): cached plans, index scans only.
        let claimed = try await client.query(
            "SELECT * FROM ledger_outbox_claim($1, $2, $3)",
            [.timestamp(now), .timestamp(now.addingTimeInterval(lease)), .int(Int64(batchSize))])
        var messages: [(OutboxMessage, attempts: Int64)] = []
        for row in claimed.rows {
            guard let id = try row.uuid(0), let channel = row.string(1).flatMap(OutboxMessage.Channel.init(rawValue:)),
                let template = row.string(3), let attempts = try row.int(8)
            else { continue }
            messages.append(
                (
                    OutboxMessage(
                        id: id, channel: channel, to: row.string(2) ?? "", template: template, code: row.string(4),
                        link: row.string(6), token: row.string(5), locale: row.string(7) ?? "en",
                        details: row.string(9).flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) }),
                    attempts
                ))
        }
        let limits = Dictionary(
            uniqueKeysWithValues: messages.map { ($0.0.id, $0.0.channel == .provider ? maximumRevocationAttempts : maximumAttempts) })
        let outcomes = await withTaskGroup(of: (UUID, Int64, String?).self) { group in
            for (message, attempts) in messages {
                group.addTask {
                    do {
                        guard let sink = self.sink(for: message.channel) else {
                            throw DeliveryError("no provider credentials are configured to revoke the token")
                        }
                        try await sink.deliver(message)
                        return (message.id, attempts, nil)
                    } catch {
                        return (message.id, attempts, (error as? DeliveryError)?.description ?? "delivery failed (\(type(of: error)))")
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let delivered = outcomes.filter { $0.2 == nil }.map(\.0)
        if !delivered.isEmpty {
            try await client.query(
                "SELECT ledger_outbox_delivered($1::uuid[], $2)",
                [.uuidArray(delivered), .timestamp(clock.now())])
        }
        for (id, attempts, failure) in outcomes {
            guard let reason = failure else { continue }
            if attempts >= Int64(limits[id] ?? maximumAttempts) {
                try await client.query(
                    "UPDATE outbox SET failed_at = $2, last_error = $3, recipient = NULL, code = NULL, token = NULL, link = NULL, details = NULL WHERE id = $1",
                    [.uuid(id), .timestamp(clock.now()), .text(reason)])
                logger.error("delivery gave up", metadata: ["id": "\(id)", "attempts": "\(attempts)", "error": "\(reason)"])
            } else {
                try await client.query(
                    "UPDATE outbox SET next_attempt_at = $2, last_error = $3 WHERE id = $1",
                    [.uuid(id), .timestamp(clock.now().addingTimeInterval(Self.backoff(afterAttempt: Int(attempts)))), .text(reason)])
                logger.warning("delivery failed; will retry", metadata: ["id": "\(id)", "attempts": "\(attempts)", "error": "\(reason)"])
            }
        }
        return (claimed.rowCount, delivered.count)
    }

    /// Where a message of `channel` goes.
    func sink(for channel: OutboxMessage.Channel) -> (any DeliverySink)? {
        switch channel {
        case .sms, .email: return sink
        case .provider: return revocations
        }
    }

    /// Runs passes until the task is cancelled: at once again after a full batch, otherwise
    /// after the next commit or `interval`, whichever comes first.
    public func run(every interval: Duration) async {
        while !Task.isCancelled {
            let generation = store?.commitGeneration
            var claimed = 0
            do {
                claimed = try await pass().claimed
            } catch {
                logger.warning("delivery pass failed", metadata: ["error": "\(error)"])
            }
            if claimed >= batchSize { continue }
            if let store, let generation {
                await store.waitForCommit(after: generation, timeout: interval)
            } else {
                try? await Task.sleep(for: interval)
            }
        }
    }
}

extension DeliveryDispatcher: Service {
    /// Runs with the service group until its graceful shutdown (every 500 ms at the latest).
    public func run() async throws {
        await cancelWhenGracefulShutdown { await run(every: .milliseconds(500)) }
    }
}
