import Foundation

/// The phone-code events as a registry, as `AccountEvent.registrations` holds the account's.
extension OTPEvent {
    /// Every code request event type, by its stored name.
    public enum Kind: String, CaseIterable, Sendable {
        case issued = "phone.otp_issued"
        case failed = "phone.otp_failed"
        case verified = "phone.otp_verified"
        case invalidated = "phone.otp_invalidated"
        case cancelled = "phone.otp_cancelled"
    }

    /// The event's type and its payload: the one switch over the cases.
    var parts: (kind: Kind, payload: any Encodable) {
        switch self {
        case .issued(let payload): return (.issued, payload)
        case .failed(let payload): return (.failed, payload)
        case .verified(let payload): return (.verified, payload)
        case .invalidated(let payload): return (.invalidated, payload)
        case .cancelled(let payload): return (.cancelled, payload)
        }
    }

    /// Its type.
    public var kind: Kind { parts.kind }

    /// One event type as the registry holds it.
    public typealias Registration = EventRegistration<OTPEvent, Kind>

    /// Every code request event type, with the `OTPCommand`s that append it.
    public static let registrations: [Registration] = [
        .init(.issued, Issued.self, OTPEvent.issued, emittedBy: ["issue"]),
        .init(.failed, Failed.self, OTPEvent.failed, emittedBy: ["verify"]),
        .init(.verified, Verified.self, OTPEvent.verified, emittedBy: ["verify"]),
        .init(.invalidated, Invalidated.self, OTPEvent.invalidated, emittedBy: ["verify", "supersede"]),
        .init(.cancelled, Cancelled.self, OTPEvent.cancelled, emittedBy: ["cancel"]),
    ]

    /// The registry, by stored type name.
    static let registry = Registration.registry(registrations)
}

extension OTPEvent.Kind {
    /// Its entry in the registry. Every kind has one (`EventCatalogTests`).
    public var registration: OTPEvent.Registration {
        guard let registration = OTPEvent.registry[rawValue] else { preconditionFailure("\(rawValue) is not registered") }
        return registration
    }

    /// The type its payload decodes as.
    public var payloadType: any Decodable.Type { registration.payloadType }

    /// The `OTPCommand`s whose decision (`decide`) can append it.
    public var emittedBy: [String] { registration.emittedBy }
}
