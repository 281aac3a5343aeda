import Foundation
import LedgerIdentity

// The flows of a code request, each one transaction of the repository (`OTPRepository`): the
// rules live here once, and the PostgreSQL and in-memory repositories only read and write.
extension OTPService {
    /// Issues a code: under the lock on the number and purpose it checks the send limits
    /// (`rate_limited` with the wait), supersedes the number's open codes for the purpose,
    /// appends `phone.otp_issued` and queues the text. Returns the seconds until the next code
    /// for this number and purpose may be sent.
    func issue(_ requestID: UUID, _ issued: OTPEvent.Issued, clientAddress: String?, message: OutboxMessage) async throws -> Int {
        let now = clock.now()
        let policy = policy
        return try await otps.sending(issued) { transaction in
            let history = try await transaction.sendHistory(issued, clientAddress: clientAddress, policy: policy, now: now)
            try policy.admitSend(history.facts, now: now)
            for open in try await transaction.load(history.open) {
                try await transaction.append(open, try decide(open, .supersede, now: now), clientAddress: nil, now: now)
            }
            // A fresh random id: nothing to read; the store still refuses a second stream of it.
            let fresh = OTPChallenge(requestID: requestID)
            try await transaction.append(fresh, try decide(fresh, .issue(issued), now: now), clientAddress: clientAddress, now: now)
            try await transaction.enqueue(message, accountID: issued.accountID, now: now)
            return policy.resendAfter(sendingAfter: history.facts, now: now)
        }
    }

    /// Checks a code. When it is right, `command` (given the code and when it was issued) runs on
    /// the account it acts on in the same transaction (sign-in: the number's owner, or a new
    /// account), so two concurrent verifications of one code cannot both succeed. A wrong or
    /// late code commits its failure and returns the verdict. A number that took
    /// `policy.dailyFailureLimit` wrong codes in the last day is `rate_limited` before its code
    /// is compared, however many of its codes are open.
    func check(
        _ requestID: UUID, presentedCodeHash: String, sessionID: UUID?,
        command: @escaping @Sendable (OTPEvent.Issued, _ issuedAt: Date, AccountState) throws -> AccountCommand
    ) async throws -> OTPVerification {
        let now = clock.now()
        let policy = policy
        return try await otps.changing(requestID) { transaction in
            guard let challenge = try await transaction.load([requestID]).first, let issued = challenge.issued else {
                throw IdentityError.codeExpired
            }
            let checks = try await transaction.codeChecks(phone: issued.phone, policy: policy, now: now, account: issued.accountID)
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
                let target = try await Self.target(of: issued, in: transaction)
                events = [.verified(.init(accountID: target))]
                // Only when the account's command commits does the code count as used.
                let issuedAt = challenge.issuedAt ?? now
                account = try await transaction.execute(target, now: now) { try command(issued, issuedAt, $0) }
            }
            try await transaction.append(challenge, events, clientAddress: nil, now: now)
            return OTPVerification(verdict: verdict, account: account?.0, accountEvents: account?.1 ?? [])
        }
    }

    /// The account a verified code acts on: the session's for signed-in purposes; for sign-in
    /// the number's owner, else the account the request reserved (a fresh id when that one
    /// exists meanwhile without this number).
    private static func target(of issued: OTPEvent.Issued, in transaction: any OTPTransaction) async throws -> UUID {
        guard issued.purpose == .signIn else { return issued.accountID }
        if let owner = try await transaction.phoneOwner(issued.phone) { return owner }
        return try await transaction.accountExists(issued.accountID) ? UUID.random() : issued.accountID
    }

    /// Cancels an open request (back navigation).
    func cancel(_ requestID: UUID, sessionID: UUID?) async throws {
        let now = clock.now()
        try await otps.changing(requestID) { transaction in
            guard let challenge = try await transaction.load([requestID]).first else {
                throw IdentityError(.notFound, "No such code request.")
            }
            try await transaction.append(
                challenge, try decide(challenge, .cancel(sessionID: sessionID), now: now), clientAddress: nil, now: now)
        }
    }
}
