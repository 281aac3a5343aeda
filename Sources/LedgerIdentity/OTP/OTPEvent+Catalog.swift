import Foundation

/// The phone-code events as a list, as `AccountEvent.Kind` lists the account's.
extension OTPEvent {
    /// Every code request event type, by its stored name.
    public enum Kind: String, CaseIterable, Sendable {
        case issued = "phone.otp_issued"
        case failed = "phone.otp_failed"
        case verified = "phone.otp_verified"
        case invalidated = "phone.otp_invalidated"
        case cancelled = "phone.otp_cancelled"
    }

    public var kind: Kind {
        switch self {
        case .issued: return .issued
        case .failed: return .failed
        case .verified: return .verified
        case .invalidated: return .invalidated
        case .cancelled: return .cancelled
        }
    }
}

extension OTPEvent.Kind {
    /// The type its payload decodes as.
    public var payloadType: any Decodable.Type {
        switch self {
        case .issued: return OTPEvent.Issued.self
        case .failed: return OTPEvent.Failed.self
        case .verified: return OTPEvent.Verified.self
        case .invalidated: return OTPEvent.Invalidated.self
        case .cancelled: return OTPEvent.Cancelled.self
        }
    }

    /// The `OTPCommand`s whose decision (`decide`) can append it.
    public var emittedBy: [String] {
        switch self {
        case .issued: return ["issue"]
        case .failed: return ["verify"]
        case .verified: return ["verify"]
        case .invalidated: return ["verify", "supersede"]
        case .cancelled: return ["cancel"]
        }
    }
}
