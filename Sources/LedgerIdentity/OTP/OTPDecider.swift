import Foundation
import LedgerCrypto

/// Decides an OTP request's events. A verification answers with events even when the code is
/// wrong or expired: the failure is recorded, and `OTPVerdict` tells the caller what to say.
public func decide(_ state: OTPChallenge, _ command: OTPCommand, now: Date) throws -> [OTPEvent] {
    switch command {
    case .issue(let issued):
        guard state.status == .unknown else { throw IdentityError(.accountExists, "This code request already exists.") }
        return [.issued(issued)]

    case .verify(let presented, let sessionID, let accountID, let accountDeleted):
        // Unknown, used, cancelled or invalidated requests, and other sessions' requests, all
        // look alike: the code cannot be used.
        guard state.status == .open, let issued = state.issued, issued.sessionID == nil || issued.sessionID == sessionID else {
            throw IdentityError.codeExpired
        }
        guard !accountDeleted else { return [.invalidated(.init(reason: .accountDeleted))] }
        guard now < issued.expiresAt else { return [.invalidated(.init(reason: .expired))] }
        if ConstantTime.equals(Array(presented.utf8), Array(issued.codeHash.utf8)) {
            return [.verified(.init(accountID: accountID))]
        }
        let attempt = state.failedAttempts + 1
        let remaining = max(0, issued.maxAttempts - attempt)
        let failed = OTPEvent.failed(.init(attempt: attempt, attemptsRemaining: remaining))
        return remaining == 0 ? [failed, .invalidated(.init(reason: .attemptsExhausted))] : [failed]

    case .cancel(let sessionID):
        guard state.status != .unknown, let issued = state.issued, issued.sessionID == nil || issued.sessionID == sessionID else {
            throw IdentityError(.notFound, "No such code request.")
        }
        return state.status == .open ? [.cancelled(.init())] : []

    case .supersede:
        return state.status == .open ? [.invalidated(.init(reason: .superseded))] : []
    }
}

/// What a verification's events mean for the caller.
public enum OTPVerdict: Sendable, Equatable {
    case verified
    /// `401 incorrect_code` with the attempts left.
    case incorrect(attemptsRemaining: Int)
    /// `410 code_expired`: too late, or the last attempt was used up.
    case expired

    public init(_ events: [OTPEvent]) {
        if events.contains(where: { if case .verified = $0 { return true } else { return false } }) {
            self = .verified
        } else if events.contains(where: { if case .invalidated = $0 { return true } else { return false } }) {
            self = .expired
        } else if case .failed(let failed)? = events.first {
            self = .incorrect(attemptsRemaining: failed.attemptsRemaining)
        } else {
            self = .expired
        }
    }

    /// The error to answer with, when the code did not verify.
    public var error: IdentityError? {
        switch self {
        case .verified: return nil
        case .incorrect(let remaining): return .incorrectCode(attemptsRemaining: remaining)
        case .expired: return .codeExpired
        }
    }
}
