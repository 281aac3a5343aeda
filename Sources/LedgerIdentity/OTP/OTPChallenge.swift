import Foundation

/// One OTP request as its events leave it.
public struct OTPChallenge: Sendable, Equatable {
    public enum Status: Sendable, Equatable {
        /// Nothing was issued under this id.
        case unknown
        /// The code may still be entered.
        case open
        case verified
        case invalidated(OTPEvent.Invalidated.Reason)
        case cancelled
    }

    public let requestID: UUID
    public var version: Int64 = 0
    public var status: Status = .unknown
    public var issued: OTPEvent.Issued?
    public var issuedAt: Date?
    public var failedAttempts = 0

    public init(requestID: UUID) {
        self.requestID = requestID
    }

    public var attemptsRemaining: Int { max(0, (issued?.maxAttempts ?? 0) - failedAttempts) }

    /// Open and within its lifetime at `now`.
    public func isLive(at now: Date) -> Bool {
        guard status == .open, let issued else { return false }
        return now < issued.expiresAt
    }
}

/// Applies one event to an OTP request.
public func evolve(_ state: OTPChallenge, _ event: OTPEvent, at recordedAt: Date) -> OTPChallenge {
    var state = state
    state.version += 1
    switch event {
    case .issued(let issued):
        state.issued = issued
        state.issuedAt = recordedAt
        state.status = .open
    case .failed(let failed):
        state.failedAttempts = failed.attempt
    case .verified:
        state.status = .verified
    case .invalidated(let invalidated):
        state.status = .invalidated(invalidated.reason)
    case .cancelled:
        state.status = .cancelled
    }
    return state
}
