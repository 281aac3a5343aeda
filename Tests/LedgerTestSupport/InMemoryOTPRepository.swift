import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity

/// Code requests in memory, for the use cases' fast tests: the same `decide` and `evolve` as the
/// PostgreSQL repository and the same limits (`OTPPolicy.admitSend`) over the same facts, read
/// from the requests held here. One actor; every change holds its number from before its first
/// wait until it is recorded (as the PostgreSQL repository's locks on the number and the request's
/// stream do), so the changes of one number run one after another, each deciding on what the
/// last left. As on PostgreSQL, sends to different numbers are not ordered: the limits that
/// span numbers (an address's, a /48's, an account's, a country's) count what has committed.
public actor InMemoryOTPRepository: OTPRepository {
    let accounts: InMemoryAccountRepository
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

    public nonisolated func sending<T: Sendable>(
        _ issued: OTPEvent.Issued, _ body: (any OTPTransaction) async throws -> T
    ) async throws -> T {
        try await holding(issued.phone, body)
    }

    public nonisolated func changing<T: Sendable>(
        _ requestID: UUID, _ body: (any OTPTransaction) async throws -> T
    ) async throws -> T {
        // What `body` reads, it reads after the wait: what an earlier change of the number left.
        try await holding(await requests[requestID]?.issued.phone, body)
    }

    /// Runs `body` holding `phone` (when there is one), and lets it go however `body` ends.
    private nonisolated func holding<T: Sendable>(_ phone: String?, _ body: (any OTPTransaction) async throws -> T) async throws -> T {
        guard let phone else { return try await body(Transaction(repository: self)) }
        await hold(phone)
        do {
            let value = try await body(Transaction(repository: self))
            await release(phone)
            return value
        } catch {
            await release(phone)
            throw error
        }
    }

    /// One transaction's reads and writes: the repository's, while the number is held.
    struct Transaction: OTPTransaction {
        let repository: InMemoryOTPRepository

        func sendHistory(
            _ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, now: Date
        ) async throws -> (facts: OTPSendHistory, open: [UUID]) {
            await repository.sendHistory(issued, clientAddress: clientAddress, policy: policy, now: now)
        }

        func load(_ requestIDs: [UUID]) async throws -> [OTPChallenge] {
            await repository.challenges(requestIDs)
        }

        func append(_ challenge: OTPChallenge, _ events: [OTPEvent], clientAddress: String?, now: Date) async throws {
            await repository.append(challenge, events, clientAddress: clientAddress, now: now)
        }

        func enqueue(_ message: OutboxMessage, accountID: UUID, now: Date) async throws {
            try await repository.accounts.park(message, accountID: accountID)
        }

        func codeChecks(
            phone: String, policy: OTPPolicy, now: Date, account accountID: UUID
        ) async throws -> (failures: [OTPFailures], accountDeleted: Bool) {
            (await repository.failures(phone, policy: policy, now: now), try await repository.accounts.load(accountID).isDeleted)
        }

        func phoneOwner(_ phone: String) async throws -> UUID? {
            try await repository.accounts.phoneOwner(phone)
        }

        func accountExists(_ accountID: UUID) async throws -> Bool {
            try await repository.accounts.load(accountID).exists
        }

        func execute(
            _ accountID: UUID, now: Date, _ command: @escaping @Sendable (AccountState) throws -> AccountCommand
        ) async throws -> (AccountState, [AccountEvent]) {
            try await repository.accounts.execute(accountID, outbox: [], command)
        }
    }

    private func challenges(_ requestIDs: [UUID]) -> [OTPChallenge] {
        requestIDs.map { requests[$0]?.challenge ?? OTPChallenge(requestID: $0) }
    }

    /// Records `events` on the request (a new one when `challenge` has none yet).
    private func append(_ challenge: OTPChallenge, _ events: [OTPEvent], clientAddress: String?, now: Date) {
        guard !events.isEmpty else { return }
        let after = events.reduce(challenge) { evolve($0, $1, at: now) }
        if requests[challenge.requestID] == nil {
            requests[challenge.requestID] = Request(challenge: after, events: events, createdAt: now, clientAddress: clientAddress)
        } else {
            requests[challenge.requestID]?.challenge = after
            requests[challenge.requestID]?.events += events
        }
    }

    /// The facts the limits read, as the PostgreSQL repository's query finds them.
    private func sendHistory(
        _ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, now: Date
    ) -> (facts: OTPSendHistory, open: [UUID]) {
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
        let open = all.filter {
            $0.issued.phone == issued.phone && $0.issued.purpose == issued.purpose && $0.challenge.isLive(at: now)
                && ($0.issued.sessionID == nil || $0.issued.accountID == issued.accountID)
        }.map(\.challenge.requestID)
        return (history, open)
    }

    private func failures(_ phone: String, policy: OTPPolicy, now: Date) -> [OTPFailures] {
        requests.values.filter {
            $0.issued.phone == phone && $0.challenge.failedAttempts > 0
                && $0.createdAt > now.addingTimeInterval(-policy.dailyFailureWindow)
        }.map { OTPFailures(requestedAt: $0.createdAt, count: $0.challenge.failedAttempts) }
    }
}
