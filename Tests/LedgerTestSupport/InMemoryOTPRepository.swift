import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity

/// Code requests in memory, for the use cases' fast tests: the same `decide` and `evolve` as the
/// PostgreSQL repository and the same limits (`OTPPolicy.admitSend`) over the same facts, read
/// from the requests held here. One actor; every change holds its number from before its first
/// wait until it is recorded (as the PostgreSQL repository's locks on the number and the request's
/// stream do), so the changes of one number run one after another, each deciding on what the
/// last left.
public actor InMemoryOTPRepository: OTPRepository {
    private let accounts: InMemoryAccountRepository
    private let clock: any LedgerClock
    private var requests: [UUID: Request] = [:]
    /// Numbers a change holds (see the type's note).
    private var held: Set<String> = []

    /// Waits until no other change holds `phone`, then holds it; `release` lets the next one go.
    private func hold(_ phone: String) async {
        while held.contains(phone) { await Task.yield() }
        held.insert(phone)
    }

    private func release(_ phone: String) {
        held.remove(phone)
    }

    /// One request, as `otp_requests` projects it.
    struct Request {
        var challenge: OTPChallenge
        /// The request's stream.
        var events: [OTPEvent] = []
        let createdAt: Date
        let clientAddress: String?

        var issued: OTPEvent.Issued { challenge.issued! }
    }

    /// How many code-request events are stored, of `type` when given.
    public func eventCount(type: String? = nil) -> Int {
        requests.values.reduce(0) { $0 + $1.events.count { type == nil || $0.type == type } }
    }

    /// The code requests' event types, request by request in the order they were made.
    public func eventTypes() -> [String] {
        requests.values.sorted { $0.createdAt < $1.createdAt }.flatMap { $0.events.map(\.type) }
    }

    public init(accounts: InMemoryAccountRepository, clock: any LedgerClock) {
        self.accounts = accounts
        self.clock = clock
    }

    public func issue(
        _ requestID: UUID, _ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, message: OutboxMessage
    ) async throws -> Int {
        await hold(issued.phone)
        defer { release(issued.phone) }
        let now = clock.now()
        let history = sendHistory(issued, clientAddress: clientAddress, policy: policy, now: now)
        try policy.admitSend(history, now: now)
        for (id, request) in requests
        where request.issued.phone == issued.phone && request.issued.purpose == issued.purpose && request.challenge.isLive(at: now)
            && (request.issued.sessionID == nil || request.issued.accountID == issued.accountID)
        {
            try apply(.supersede, to: id, now: now)
        }
        let fresh = OTPChallenge(requestID: requestID)
        let events = try decide(fresh, .issue(issued), now: now)
        requests[requestID] = Request(
            challenge: events.reduce(fresh) { evolve($0, $1, at: now) }, events: events, createdAt: now, clientAddress: clientAddress)
        try await accounts.park(message, accountID: issued.accountID)
        return policy.resendAfter(sendingAfter: history, now: now)
    }

    /// The facts the limits read, as the PostgreSQL repository's query finds them.
    private func sendHistory(_ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, now: Date) -> OTPSendHistory {
        let all = requests.values
        func within(_ window: TimeInterval, _ request: Request) -> Bool { request.createdAt > now.addingTimeInterval(-window) }
        /// The send that fills a window of `limit`, when it is full.
        func filling(_ matching: [Request], limit: Int) -> Date? {
            let newest = matching.map(\.createdAt).sorted(by: >)
            return limit > 0 && newest.count >= limit ? newest[limit - 1] : nil
        }
        var history = OTPSendHistory()
        history.phone = all.filter {
            $0.issued.phone == issued.phone && $0.issued.purpose == issued.purpose
                && within(max(policy.resendWindow, policy.resendInterval), $0)
        }.map(\.createdAt)
        history.address = all.filter { clientAddress != nil && $0.clientAddress == clientAddress && within(policy.capWindow, $0) }
            .map(\.createdAt)
        history.account = all.filter {
            issued.sessionID != nil && $0.issued.accountID == issued.accountID && $0.issued.sessionID != nil && within(policy.capWindow, $0)
        }.map(\.createdAt)
        let network = clientAddress.flatMap(IPAddress.networkLimitKey)
        history.networkFull = filling(
            all.filter { network != nil && $0.clientAddress.flatMap(IPAddress.networkLimitKey) == network && within(policy.capWindow, $0) },
            limit: policy.networkLimit)
        if issued.sessionID == nil, policy.regionLimit > 0 {
            history.regionFull = filling(
                all.filter { $0.issued.region == issued.region && $0.issued.sessionID == nil && within(policy.regionWindow, $0) },
                limit: policy.regionLimit)
        }
        history.failures = failures(issued.phone, policy: policy, now: now)
        return history
    }

    private func failures(_ phone: String, policy: OTPPolicy, now: Date) -> [OTPFailures] {
        requests.values.filter {
            $0.issued.phone == phone && $0.challenge.failedAttempts > 0
                && $0.createdAt > now.addingTimeInterval(-policy.dailyFailureWindow)
        }.map { OTPFailures(requestedAt: $0.createdAt, count: $0.challenge.failedAttempts) }
    }

    public func verify(
        _ requestID: UUID, presentedCodeHash: String, sessionID: UUID?, policy: OTPPolicy,
        command: @escaping @Sendable (OTPEvent.Issued, _ issuedAt: Date, AccountState) throws -> AccountCommand
    ) async throws -> OTPVerification {
        guard let phone = requests[requestID]?.issued.phone else { throw IdentityError.codeExpired }
        await hold(phone)
        defer { release(phone) }
        // Read after the wait: what an earlier verification of the number left.
        guard let request = requests[requestID] else { throw IdentityError.codeExpired }
        let now = clock.now()
        let issued = request.issued
        try policy.admitCodes(failures: failures(issued.phone, policy: policy, now: now), now: now)
        let accountDeleted = try await accounts.load(issued.accountID).isDeleted
        var events = try decide(
            request.challenge,
            .verify(
                presentedCodeHash: presentedCodeHash, sessionID: sessionID, accountID: issued.accountID, accountDeleted: accountDeleted),
            now: now)
        let verdict = OTPVerdict(events)
        var account: (AccountState, [AccountEvent])?
        if verdict == .verified {
            let target = try await targetAccount(issued)
            events = [.verified(.init(accountID: target))]
            // Only when the account's command commits does the code count as used.
            account = try await accounts.execute(target, outbox: []) { try command(issued, request.createdAt, $0) }
        }
        // The number is held: nothing changed this request since it was read.
        requests[requestID]?.challenge = events.reduce(request.challenge) { evolve($0, $1, at: now) }
        requests[requestID]?.events += events
        return OTPVerification(verdict: verdict, account: account?.0, accountEvents: account?.1 ?? [])
    }

    /// The account a verified code acts on, as the PostgreSQL repository picks it.
    private func targetAccount(_ issued: OTPEvent.Issued) async throws -> UUID {
        guard issued.purpose == .signIn else { return issued.accountID }
        if let owner = try await accounts.phoneOwner(issued.phone) { return owner }
        return try await accounts.load(issued.accountID).exists ? UUID.random() : issued.accountID
    }

    public func cancel(_ requestID: UUID, sessionID: UUID?) async throws {
        guard let phone = requests[requestID]?.issued.phone else {
            return try apply(.cancel(sessionID: sessionID), to: requestID, now: clock.now())
        }
        await hold(phone)
        defer { release(phone) }
        try apply(.cancel(sessionID: sessionID), to: requestID, now: clock.now())
    }

    private func apply(_ command: OTPCommand, to requestID: UUID, now: Date) throws {
        let challenge = requests[requestID]?.challenge ?? OTPChallenge(requestID: requestID)
        let events = try decide(challenge, command, now: now)
        requests[requestID]?.challenge = events.reduce(challenge) { evolve($0, $1, at: now) }
        requests[requestID]?.events += events
    }
}
