import Foundation
import LedgerIdentity

/// Where phone-code requests are stored: one stream per request, and what the send limits read.
/// The rules (the limits, which requests a new code replaces, a code's verdict, the account a
/// right code acts on) are `OTPService`'s (`OTPService+Requests.swift`); a repository runs each
/// of its flows in one transaction and only reads and writes.
public protocol OTPRepository: Sendable {
    /// Runs `body` in one transaction that holds the lock on sends to `issued`'s number and
    /// purpose, so that the limits hold across instances. What `body` writes commits together,
    /// and nothing does when it throws.
    func sending<T: Sendable>(_ issued: OTPEvent.Issued, _ body: (any OTPTransaction) async throws -> T) async throws -> T

    /// Runs `body` in one transaction for a change to the request `requestID` (a verification,
    /// a cancel): changes of one request run one after another, each deciding on what the last
    /// left. What `body` writes commits together, and nothing does when it throws.
    func changing<T: Sendable>(_ requestID: UUID, _ body: (any OTPTransaction) async throws -> T) async throws -> T
}

/// What one transaction of `OTPRepository` reads and writes.
public protocol OTPTransaction {
    /// What the send limits read for a new code to `issued`'s number, and the open requests
    /// the code replaces (for a signed-in purpose, only the same account's).
    func sendHistory(
        _ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, now: Date
    ) async throws -> (facts: OTPSendHistory, open: [UUID])

    /// The requests as their streams fold, each stream locked before any is written, in one
    /// order (docs/architecture.md, "Event store rules").
    func load(_ requestIDs: [UUID]) async throws -> [OTPChallenge]

    /// Appends `events` to the request's stream and projects them; `clientAddress` is the
    /// sender of a new request.
    func append(_ challenge: OTPChallenge, _ events: [OTPEvent], clientAddress: String?, now: Date) async throws

    /// Queues the text that carries the code.
    func enqueue(_ message: OutboxMessage, accountID: UUID, now: Date) async throws

    /// Takes the lock on `phone`'s code checks (its open codes, one per purpose, together take
    /// no more wrong codes than the day's cap), then reads the wrong codes it took in the last
    /// day and whether `accountID`, the account the code acts on, was deleted.
    func codeChecks(
        phone: String, policy: OTPPolicy, now: Date, account accountID: UUID
    ) async throws -> (failures: [OTPFailures], accountDeleted: Bool)

    /// The live account that holds `phone`.
    func phoneOwner(_ phone: String) async throws -> UUID?

    /// Whether an account with this id exists (deleted ones included).
    func accountExists(_ accountID: UUID) async throws -> Bool

    /// Runs an account's command in this transaction.
    func execute(
        _ accountID: UUID, now: Date, _ command: @escaping @Sendable (AccountState) throws -> AccountCommand
    ) async throws -> (AccountState, [AccountEvent])
}

/// The outcome of `OTPService.check`.
public struct OTPVerification: Sendable {
    public let verdict: OTPVerdict
    /// The account after the command, when the code was right.
    public let account: AccountState?
    public let accountEvents: [AccountEvent]

    public init(verdict: OTPVerdict, account: AccountState?, accountEvents: [AccountEvent]) {
        self.verdict = verdict
        self.account = account
        self.accountEvents = accountEvents
    }
}
