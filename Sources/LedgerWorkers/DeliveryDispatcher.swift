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
/// transaction stays open during the call), sends them, and then either blanks their secrets
/// or, for a failure that may pass, schedules a retry with exponential backoff (the first
/// within seconds) for as long as `retryWindow` since the message was written (at most
/// `maximumAttempts` tries); a permanent failure (a bad number, a refused recipient) is not
/// retried. A message given up keeps its last error and its recipient masked, for `ledger
/// deliveries list --failed`. A batch's messages are sent concurrently, and the delivered ones
/// are marked in one statement. Emails go to `email`, texts to `sms`; provider token
/// revocations to `revocations`, never to the delivery webhook.
public struct DeliveryDispatcher: Sendable {
    let client: PostgresClient
    let email: any DeliverySink
    let sms: any DeliverySink
    /// Revokes provider tokens; nil: such messages fail (and are retried) until one is configured.
    let revocations: (any DeliverySink)?
    let clock: any LedgerClock
    let logger: Logger
    /// When set, a commit (which is when messages are written) wakes the dispatcher at once
    /// instead of at the next poll.
    let store: EventStore?
    /// How long an SMS or email is retried after it was written (`LEDGER_DELIVERY_RETRY_SECONDS`).
    public var retryWindow: TimeInterval = 3600
    /// Tries of one SMS or email at most, whatever the window.
    public var maximumAttempts = 30
    /// Told of every try's outcome (`/metrics`).
    public var observe: DeliveryOutcomeObserver?
    /// A provider revocation is tried for a week (hourly once the backoff is at its longest):
    /// a grant must end at the provider, whatever its outage or an operator's mistake.
    public var maximumRevocationAttempts = 180
    public var batchSize = 32
    /// How long a claimed message is hidden from other dispatchers: longer than a batch can take
    /// to send (else another instance would send it again).
    public var lease: TimeInterval = 60
    /// The channels this dispatcher claims: `serve` runs one for email and one for texts and
    /// revocations, so a slow mail relay never holds up a sign-in code.
    public var channels: [OutboxMessage.Channel] = [.email, .sms, .provider]

    /// Emails and texts to one sink (the delivery webhook, the development log).
    public init(
        client: PostgresClient, sink: any DeliverySink, revocations: (any DeliverySink)? = nil, clock: any LedgerClock,
        store: EventStore? = nil, logger: Logger = Logger(label: "ledger.delivery")
    ) {
        self.init(client: client, email: sink, sms: sink, revocations: revocations, clock: clock, store: store, logger: logger)
    }

    /// Emails to `email` (SMTP, or the webhook), texts to `sms` (Twilio, or the webhook).
    public init(
        client: PostgresClient, email: any DeliverySink, sms: any DeliverySink, revocations: (any DeliverySink)? = nil,
        clock: any LedgerClock, store: EventStore? = nil, logger: Logger = Logger(label: "ledger.delivery")
    ) {
        self.client = client
        self.email = email
        self.sms = sms
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
            "SELECT * FROM ledger_outbox_claim($1, $2, $3, $4)",
            [
                .timestamp(now), .timestamp(now.addingTimeInterval(lease)), .int(Int64(batchSize)),
                .textArray(channels.map(\.rawValue)),
            ])
        var messages: [Claimed] = []
        for row in claimed.rows {
            guard let id = try row.uuid(0), let channel = row.string(1).flatMap(OutboxMessage.Channel.init(rawValue:)),
                let template = row.string(3), let attempts = try row.int(8)
            else { continue }
            let message = OutboxMessage(
                id: id, channel: channel, to: row.string(2) ?? "", template: template, code: row.string(4),
                link: row.string(6), token: row.string(5), locale: row.string(7) ?? "en",
                details: row.string(9).flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) },
                expiresAt: try row.date(11))
            messages.append(Claimed(message: message, attempts: attempts, createdAt: try row.date(10) ?? now))
        }
        let outcomes = await withTaskGroup(of: (Claimed, DeliveryError?).self) { group in
            for claimed in messages {
                group.addTask {
                    do {
                        // Its code or link no longer works: sending it would only bill a text.
                        if let expiresAt = claimed.message.expiresAt, expiresAt <= now {
                            throw DeliveryError("its code or link expired before it could be sent", kind: .permanent)
                        }
                        guard let sink = self.sink(for: claimed.message.channel) else {
                            throw DeliveryError("no provider credentials are configured to revoke the token", kind: .configuration)
                        }
                        try await sink.deliver(claimed.message)
                        return (claimed, nil)
                    } catch let error as DeliveryError {
                        return (claimed, error)
                    } catch {
                        return (claimed, DeliveryError("delivery failed (\(type(of: error)))"))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let delivered = outcomes.filter { $0.1 == nil }.map(\.0.message.id)
        if !delivered.isEmpty {
            try await client.query(
                "SELECT ledger_outbox_delivered($1::uuid[], $2)",
                [.uuidArray(delivered), .timestamp(clock.now())])
        }
        for (claimed, failure) in outcomes {
            let message = claimed.message
            let provider = sink(for: message.channel)?.provider ?? "none"
            guard let failure else {
                observe?(message.channel.rawValue, provider, .sent)
                continue
            }
            // The relay's words may quote the recipient, echo credentials or hold line breaks:
            // cleaned and masked before they are kept or logged, whichever sink said them.
            let reason = RecipientMask.maskingRecipients(in: ProviderErrorText.sanitized(failure.description))
            let retryAt = clock.now().addingTimeInterval(Self.backoff(afterAttempt: Int(claimed.attempts)))
            let metadata: Logger.Metadata = [
                "id": "\(message.id)", "channel": "\(message.channel.rawValue)", "provider": "\(provider)",
                "attempts": "\(claimed.attempts)", "error": "\(reason)",
            ]
            if failure.kind == .configuration {
                logger.error("delivery refused by the way out's configuration (the operator's to fix)", metadata: metadata)
            }
            if !failure.isRetryable || !mayRetry(claimed, at: retryAt) {
                try await client.query(
                    """
                    UPDATE outbox SET failed_at = $2, last_error = $3, provider = $4, recipient_masked = $5, recipient = NULL,
                                      code = NULL, token = NULL, link = NULL, details = NULL
                    WHERE id = $1
                    """,
                    [
                        .uuid(message.id), .timestamp(clock.now()), .text(reason), .text(provider),
                        .text(message.channel == .provider ? message.to : RecipientMask.mask(message.to)),
                    ])
                logger.error("delivery gave up", metadata: metadata)
                observe?(message.channel.rawValue, provider, .failed)
            } else {
                try await client.query(
                    "UPDATE outbox SET next_attempt_at = $2, last_error = $3 WHERE id = $1",
                    [.uuid(message.id), .timestamp(retryAt), .text(reason)])
                logger.warning("delivery failed; will retry", metadata: metadata)
                observe?(message.channel.rawValue, provider, .retrying)
            }
        }
        return (claimed.rowCount, delivered.count)
    }

    /// A message claimed for a try.
    struct Claimed: Sendable {
        let message: OutboxMessage
        let attempts: Int64
        let createdAt: Date
    }

    /// Whether a failed message may be tried again at `retryAt`: a revocation for a week of
    /// tries, an SMS or email within its window and its tries, and while its code or link works.
    func mayRetry(_ claimed: Claimed, at retryAt: Date) -> Bool {
        if claimed.message.channel == .provider { return claimed.attempts < Int64(maximumRevocationAttempts) }
        return claimed.attempts < Int64(maximumAttempts) && retryAt <= claimed.createdAt.addingTimeInterval(retryWindow)
            && retryAt < (claimed.message.expiresAt ?? .distantFuture)
    }

    /// Where a message of `channel` goes.
    func sink(for channel: OutboxMessage.Channel) -> (any DeliverySink)? {
        switch channel {
        case .email: return email
        case .sms: return sms
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
