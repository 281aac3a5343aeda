import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// Phone-code requests on the event store, one stream each, projected to `otp_requests`; a
/// transaction holds advisory locks for a number's sends and code checks, and a verified
/// code's account change commits with it.
public struct PostgresOTPRepository: OTPRepository {
    let accounts: PostgresAccountRepository
    var store: EventStore { accounts.store }
    var clock: any LedgerClock { accounts.clock }
    static let streamType = "otp"

    public init(accounts: PostgresAccountRepository) {
        self.accounts = accounts
    }

    public func sending<T: Sendable>(
        _ issued: OTPEvent.Issued, _ body: (any OTPTransaction) async throws -> T
    ) async throws -> T {
        try await transaction { transaction in
            // One sender at a time per number and purpose, so the limit holds across instances.
            transaction.connection.queue(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                [.text("otp:\(issued.purpose.rawValue):\(issued.phone)")])
            return try await body(transaction)
        }
    }

    public func changing<T: Sendable>(_ requestID: UUID, _ body: (any OTPTransaction) async throws -> T) async throws -> T {
        try await transaction { transaction in
            // The request's stream lock orders its changes, whatever the flow reads first.
            transaction.lock([requestID])
            return try await body(transaction)
        }
    }

    /// Runs `body` in one transaction; when it wrote, the store's followers hear of the commit.
    private func transaction<T: Sendable>(_ body: (Transaction) async throws -> T) async throws -> T {
        let (value, wrote) = try await store.client.transaction { connection in
            let transaction = Transaction(repository: self, connection: connection)
            let value = try await body(transaction)
            return (value, transaction.wrote)
        }
        if wrote { store.committed() }
        return value
    }

    /// One transaction's reads and writes, on its connection.
    final class Transaction: OTPTransaction {
        let repository: PostgresOTPRepository
        let connection: PostgresConnection
        /// Whether an append was queued.
        private(set) var wrote = false
        /// The streams this transaction has locked: each is locked once.
        private var locked: Set<UUID> = []

        init(repository: PostgresOTPRepository, connection: PostgresConnection) {
            self.repository = repository
            self.connection = connection
        }

        func sendHistory(
            _ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, now: Date
        ) async throws -> (facts: OTPSendHistory, open: [UUID]) {
            let history = try await repository.sendHistory(issued, clientAddress: clientAddress, policy: policy, now: now, on: connection)
            return (history.facts, history.open)
        }

        func load(_ requestIDs: [UUID]) async throws -> [OTPChallenge] {
            let ordered = requestIDs.sorted { $0.uuidString < $1.uuidString }
            lock(ordered)
            var challenges: [OTPChallenge] = []
            for requestID in ordered { challenges.append(try await repository.load(requestID, on: connection)) }
            return challenges
        }

        /// Queues the stream locks of `requestIDs` not held yet, in the order given.
        func lock(_ requestIDs: [UUID]) {
            for requestID in requestIDs where locked.insert(requestID).inserted {
                repository.store.lockStream(requestID, on: connection)
            }
        }

        func append(_ challenge: OTPChallenge, _ events: [OTPEvent], clientAddress: String?, now: Date) async throws {
            guard !events.isEmpty else { return }
            try await repository.append(challenge, events, now: now, clientAddress: clientAddress, on: connection)
            wrote = true
        }

        func enqueue(_ message: OutboxMessage, accountID: UUID, now: Date) async throws {
            Outbox.enqueue(message, accountID: accountID, at: now, on: connection)
        }

        func codeChecks(
            phone: String, policy: OTPPolicy, now: Date, account accountID: UUID
        ) async throws -> (failures: [OTPFailures], accountDeleted: Bool) {
            connection.queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [.text("otp-daily:" + phone)])
            return try await repository.dailyFailures(phone, policy: policy, now: now, deletedAccount: accountID, on: connection)
        }

        func phoneOwner(_ phone: String) async throws -> UUID? {
            try await repository.accounts.phoneOwner(phone, on: connection)
        }

        func accountExists(_ accountID: UUID) async throws -> Bool {
            try await connection.query("SELECT 1 FROM accounts WHERE account_id = $1", [.uuid(accountID)]).rowCount > 0
        }

        func execute(
            _ accountID: UUID, now: Date, _ command: @escaping @Sendable (AccountState) throws -> AccountCommand
        ) async throws -> (AccountState, [AccountEvent]) {
            try await repository.accounts.execute(accountID, outbox: [], command, at: now, on: connection)
        }
    }

    /// For a verification: the wrong codes `phone` took in the last day (all purposes and
    /// requests together) and, in the same round trip, whether `deletedAccount` (the account the
    /// code acts on) was deleted.
    func dailyFailures(
        _ phone: String, policy: OTPPolicy, now: Date, deletedAccount accountID: UUID, on connection: PostgresConnection
    ) async throws -> (failures: [OTPFailures], accountDeleted: Bool) {
        let rows = try await connection.query(
            """
            SELECT created_at, failed_attempts, false FROM otp_requests
            WHERE phone_e164 = $1 AND created_at > $2 AND failed_attempts > 0
            UNION ALL
            SELECT NULL, NULL, true FROM accounts WHERE account_id = $3 AND deleted_at IS NOT NULL
            """,
            [.text(phone), .timestamp(now.addingTimeInterval(-policy.dailyFailureWindow)), .uuid(accountID)])
        var failures: [OTPFailures] = []
        var accountDeleted = false
        for row in rows.rows {
            if let created = try row.date(0), let count = try row.int(1) {
                failures.append(OTPFailures(requestedAt: created, count: Int(count)))
            } else {
                accountDeleted = true
            }
        }
        return (failures, accountDeleted)
    }

    /// What the send limits read (`OTPSendHistory`), and the open requests a new code replaces.
    struct SendHistory {
        var facts = OTPSendHistory()
        var open: [UUID] = []
    }

    /// Earlier sends the limits count — for each limit only its newest `limit` sends inside
    /// the window, which is all a sliding window needs, so the query stays small however busy
    /// an address is; for the /48 and the country only the send at the limit (`OFFSET`) — the
    /// number's wrong codes of the day, and the open requests a new code replaces (for a
    /// signed-in purpose, only the same account's): one round trip.
    func sendHistory(
        _ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, now: Date, on connection: PostgresConnection
    ) async throws -> SendHistory {
        let horizon = now.addingTimeInterval(-max(policy.resendWindow, policy.resendInterval))
        let capHorizon = now.addingTimeInterval(-policy.capWindow)
        let rows = try await connection.query(
            """
            (SELECT 'phone', request_id, created_at, NULL::int FROM otp_requests
             WHERE phone_e164 = $1 AND purpose = $2 AND created_at > $4 ORDER BY created_at DESC LIMIT $8)
            UNION ALL
            (SELECT 'open', request_id, created_at, NULL FROM otp_requests
             WHERE phone_e164 = $1 AND purpose = $2 AND closed_at IS NULL AND expires_at > $3
               AND (session_id IS NULL OR account_id = $6))
            UNION ALL
            (SELECT 'address', request_id, created_at, NULL FROM otp_requests
             WHERE $5::text IS NOT NULL AND client_address = $5 AND created_at > $9 ORDER BY created_at DESC LIMIT $10)
            UNION ALL
            (SELECT 'account', request_id, created_at, NULL FROM otp_requests
             WHERE $7 AND account_id = $6 AND session_id IS NOT NULL AND created_at > $9 ORDER BY created_at DESC LIMIT $11)
            UNION ALL
            (SELECT 'network', request_id, created_at, NULL FROM otp_requests
             WHERE $12::text IS NOT NULL AND client_network = $12 AND created_at > $9 ORDER BY created_at DESC OFFSET $13 LIMIT 1)
            UNION ALL
            (SELECT 'region', request_id, created_at, NULL FROM otp_requests
             WHERE $14 AND region = $15 AND session_id IS NULL AND created_at > $16 ORDER BY created_at DESC OFFSET $17 LIMIT 1)
            UNION ALL
            (SELECT 'failed', request_id, created_at, failed_attempts FROM otp_requests
             WHERE phone_e164 = $1 AND created_at > $18 AND failed_attempts > 0)
            """,
            [
                .text(issued.phone), .text(issued.purpose.rawValue), .timestamp(now), .timestamp(horizon),
                clientAddress.map { .text($0) } ?? .null, .uuid(issued.accountID), .bool(issued.sessionID != nil),
                .int(Int64(policy.sendLimit.limit)), .timestamp(capHorizon), .int(Int64(policy.addressLimit)),
                .int(Int64(policy.accountLimit)),
                clientAddress.flatMap(IPAddress.networkLimitKey).map { .text($0) } ?? .null, .int(Int64(policy.networkLimit - 1)),
                .bool(issued.sessionID == nil && policy.regionLimit > 0), .text(issued.region),
                .timestamp(now.addingTimeInterval(-policy.regionWindow)), .int(Int64(max(policy.regionLimit - 1, 0))),
                .timestamp(now.addingTimeInterval(-policy.dailyFailureWindow)),
            ])
        var result = SendHistory()
        for row in rows.rows {
            guard let created = try row.date(2) else { continue }
            switch row.string(0) {
            case "phone": result.facts.phone.append(created)
            case "open": if let id = try row.uuid(1) { result.open.append(id) }
            case "address": result.facts.address.append(created)
            case "network": result.facts.networkFull = created
            case "region": result.facts.regionFull = created
            case "failed": result.facts.failures.append(OTPFailures(requestedAt: created, count: Int(try row.int(3) ?? 0)))
            default: result.facts.account.append(created)
            }
        }
        return result
    }

    func append(
        _ challenge: OTPChallenge, _ decided: [OTPEvent], now: Date, clientAddress: String?, on connection: PostgresConnection
    ) async throws {
        guard !decided.isEmpty else { return }
        // Projected as stored (times to the second), as a rebuild would.
        let stored = try decided.map { try $0.stored() }
        let events = stored.map(\.event)
        var subject = challenge.issued?.accountID
        if case .issued(let issued)? = events.first { subject = issued.accountID }
        try await store.queueAppend(
            to: challenge.requestID, streamType: Self.streamType, subjectID: subject,
            expected: challenge.version == 0 ? .noStream : .exact(challenge.version),
            events: stored.map {
                NewEvent(type: $0.event.type, schemaVersion: $0.event.schemaVersion, payload: $0.payload, metadata: .current)
            },
            recordedAt: now, on: connection)
        try await OTPProjector.project(challenge.requestID, events: events, at: now, clientAddress: clientAddress, on: connection)
    }

    func load(_ requestID: UUID, on connection: PostgresConnection) async throws -> OTPChallenge {
        var challenge = OTPChallenge(requestID: requestID)
        for recorded in try await store.readStream(requestID, on: connection) { _ = try challenge.apply(recorded) }
        return challenge
    }
}
