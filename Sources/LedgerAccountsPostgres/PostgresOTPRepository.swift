import Foundation
import LedgerAccounts
import LedgerCore
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres

/// OTP requests on the event store; a verified code's account change commits with it.
public struct PostgresOTPRepository: OTPRepository {
    let accounts: PostgresAccountRepository
    var store: EventStore { accounts.store }
    var clock: any LedgerClock { accounts.clock }
    static let streamType = "otp"

    public init(accounts: PostgresAccountRepository) {
        self.accounts = accounts
    }

    public func issue(
        _ requestID: UUID, _ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, message: OutboxMessage
    ) async throws -> Int {
        let now = clock.now()
        let resendAfter = try await store.client.transaction { connection in
            // One sender at a time per number and purpose, so the limit holds across instances.
            connection.queue(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                [.text("otp:\(issued.purpose.rawValue):\(issued.phone)")])
            let history = try await sendHistory(issued, clientAddress: clientAddress, policy: policy, now: now, on: connection)
            try policy.admitSend(history.facts, now: now)
            // Every stream this transaction writes is locked before its first write (docs/architecture.md
            // "Event store rules"), in one order: a superseded request locked after another's append would let a
            // writer of it commit a later version with an earlier transaction id.
            let superseded = history.open.sorted { $0.uuidString < $1.uuidString }
            for openID in superseded { store.lockStream(openID, on: connection) }
            for openID in superseded {
                try await apply(.supersede, to: openID, now: now, on: connection)
            }
            // A fresh random id: nothing to lock or read; `.noStream` still refuses a duplicate.
            let fresh = OTPChallenge(requestID: requestID)
            try await append(fresh, try decide(fresh, .issue(issued), now: now), now: now, clientAddress: clientAddress, on: connection)
            Outbox.enqueue(message, accountID: issued.accountID, at: now, on: connection)
            return policy.resendAfter(sendingAfter: history.facts, now: now)
        }
        store.committed()
        return resendAfter
    }

    /// For a verification: the wrong codes `phone` took in the last day (all purposes and
    /// requests together) and, in the same round trip, whether `deletedAccount` (the account the
    /// code acts on) was deleted.
    private func dailyFailures(
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
    private func sendHistory(
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

    public func verify(
        _ requestID: UUID, presentedCodeHash: String, sessionID: UUID?, policy: OTPPolicy,
        command: @escaping @Sendable (OTPEvent.Issued, _ issuedAt: Date, AccountState) throws -> AccountCommand
    ) async throws -> OTPVerification {
        let now = clock.now()
        let outcome = try await store.client.transaction { connection in
            store.lockStream(requestID, on: connection)
            let challenge = try await load(requestID, on: connection)
            guard let issued = challenge.issued else { throw IdentityError.codeExpired }
            // The number's codes are checked one at a time, so its open codes (one per
            // purpose) together cannot take more wrong codes than the daily cap.
            connection.queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [.text("otp-daily:" + issued.phone)])
            let checks = try await dailyFailures(issued.phone, policy: policy, now: now, deletedAccount: issued.accountID, on: connection)
            try policy.admitCodes(failures: checks.failures, now: now)
            var events = try decide(
                challenge,
                .verify(
                    presentedCodeHash: presentedCodeHash, sessionID: sessionID, accountID: issued.accountID,
                    accountDeleted: checks.accountDeleted),
                now: now)
            let verdict = OTPVerdict(events)
            var account: (AccountState, [AccountEvent])?
            if verdict == .verified {
                let target = try await targetAccount(issued, on: connection)
                events = [.verified(.init(accountID: target))]
                account = try await accounts.execute(
                    target, outbox: [], { try command(issued, challenge.issuedAt ?? now, $0) }, at: now, on: connection)
            }
            try await append(challenge, events, now: now, clientAddress: nil, on: connection)
            return OTPVerification(verdict: verdict, account: account?.0, accountEvents: account?.1 ?? [])
        }
        store.committed()
        return outcome
    }

    /// The account a verified code acts on: the session's for signed-in purposes; for
    /// sign-in the number's owner, else the account the request reserved (a fresh id when
    /// that one exists meanwhile without this number).
    private func targetAccount(_ issued: OTPEvent.Issued, on connection: PostgresConnection) async throws -> UUID {
        guard issued.purpose == .signIn else { return issued.accountID }
        if let owner = try await accounts.phoneOwner(issued.phone, on: connection) { return owner }
        let reserved = try await connection.query("SELECT 1 FROM accounts WHERE account_id = $1", [.uuid(issued.accountID)])
        return reserved.rowCount == 0 ? issued.accountID : UUID.random()
    }

    public func cancel(_ requestID: UUID, sessionID: UUID?) async throws {
        let changed = try await store.client.transaction { connection in
            try await run(requestID, .cancel(sessionID: sessionID), now: clock.now(), on: connection)
        }
        if changed { store.committed() }
    }

    /// Locks the request's stream, decides and appends; true when events were written.
    private func run(_ requestID: UUID, _ command: OTPCommand, now: Date, on connection: PostgresConnection) async throws -> Bool {
        store.lockStream(requestID, on: connection)
        return try await apply(command, to: requestID, now: now, on: connection)
    }

    /// Decides and appends on a stream the caller has locked; true when events were written.
    @discardableResult
    private func apply(_ command: OTPCommand, to requestID: UUID, now: Date, on connection: PostgresConnection) async throws -> Bool {
        let challenge = try await load(requestID, on: connection)
        let events = try decide(challenge, command, now: now)
        try await append(challenge, events, now: now, clientAddress: nil, on: connection)
        return !events.isEmpty
    }

    private func append(
        _ challenge: OTPChallenge, _ events: [OTPEvent], now: Date, clientAddress: String?, on connection: PostgresConnection
    ) async throws {
        guard !events.isEmpty else { return }
        var subject = challenge.issued?.accountID
        if case .issued(let issued)? = events.first { subject = issued.accountID }
        try await store.queueAppend(
            to: challenge.requestID, streamType: Self.streamType, subjectID: subject,
            expected: challenge.version == 0 ? .noStream : .exact(challenge.version),
            events: try events.map {
                NewEvent(type: $0.type, schemaVersion: $0.schemaVersion, payload: try $0.encodedPayload(), metadata: .current)
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
