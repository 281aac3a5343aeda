import Foundation
import LedgerIdentity

/// Where OTP requests live: one stream per request, and the `otp_requests` projection that
/// the send limits read.
public protocol OTPRepository: Sendable {
    /// Issues a code in one transaction: under a lock on the number and purpose it checks the
    /// send limits (throwing `rate_limited` with the wait), invalidates the number's open codes
    /// for the purpose, appends `phone.otp_issued`, projects it and queues the SMS. Returns the
    /// seconds until the next code for this number and purpose may be sent.
    func issue(
        _ requestID: UUID, _ issued: OTPEvent.Issued, clientAddress: String?, policy: OTPPolicy, message: OutboxMessage
    ) async throws -> Int

    /// Checks a code. When it is right, `command` (given the code and when it was issued) runs on the account it acts on in the same
    /// transaction (sign-in: the number's owner, or a new account); either both commit or
    /// neither does, so two concurrent verifications of one code cannot both succeed. A wrong
    /// or late code commits its failure and returns the verdict. A number that took
    /// `policy.dailyFailureLimit` wrong codes in the last day is `rate_limited` before its code
    /// is compared, however many of its codes are open.
    func verify(
        _ requestID: UUID, presentedCodeHash: String, sessionID: UUID?, policy: OTPPolicy,
        command: @escaping @Sendable (OTPEvent.Issued, _ issuedAt: Date, AccountState) throws -> AccountCommand
    ) async throws -> OTPVerification

    /// Cancels an open request (back navigation).
    func cancel(_ requestID: UUID, sessionID: UUID?) async throws
}

/// The outcome of `OTPRepository.verify`.
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
