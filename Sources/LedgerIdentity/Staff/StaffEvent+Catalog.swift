import Foundation

/// The staff events as a registry, as `AccountEvent.registrations` holds the account's.
extension StaffEvent {
    /// Every staff event type, by its stored name.
    public enum Kind: String, CaseIterable, Sendable {
        case invited = "staff.invited"
        case passkeyRegistered = "staff.passkey_registered"
        case signedIn = "staff.signed_in"
        case passkeyConfirmed = "staff.passkey_confirmed"
        case signedOut = "staff.signed_out"
        case removed = "staff.removed"
    }

    /// The event's type and its payload: the one switch over the cases.
    var parts: (kind: Kind, payload: any Encodable) {
        switch self {
        case .invited(let payload): return (.invited, payload)
        case .passkeyRegistered(let payload): return (.passkeyRegistered, payload)
        case .signedIn(let payload): return (.signedIn, payload)
        case .passkeyConfirmed(let payload): return (.passkeyConfirmed, payload)
        case .signedOut(let payload): return (.signedOut, payload)
        case .removed(let payload): return (.removed, payload)
        }
    }

    public var kind: Kind { parts.kind }
    /// The stored type name.
    public var type: String { kind.rawValue }

    public typealias Registration = EventRegistration<StaffEvent, Kind>

    /// Every staff event type, with the `StaffCommand`s that append it.
    public static let registrations: [Registration] = [
        .init(.invited, Invited.self, StaffEvent.invited, emittedBy: ["invite"]),
        .init(.passkeyRegistered, PasskeyRegistered.self, StaffEvent.passkeyRegistered, emittedBy: ["registerPasskey"]),
        .init(.signedIn, SignedIn.self, StaffEvent.signedIn, emittedBy: ["signIn"]),
        .init(.passkeyConfirmed, PasskeyConfirmed.self, StaffEvent.passkeyConfirmed, emittedBy: ["confirmPasskey"]),
        .init(.signedOut, SignedOut.self, StaffEvent.signedOut, emittedBy: ["signOut", "remove"]),
        .init(.removed, Removed.self, StaffEvent.removed, emittedBy: ["remove"]),
    ]

    static let registry = Registration.registry(registrations)

    public var schemaVersion: Int { 1 }

    /// The JSON payload.
    public func encodedPayload() throws -> [UInt8] {
        try AccountEvent.encode(payload: parts.payload).bytes
    }

    /// The payload to store, and the event as reading it back gives it (times to the second).
    public func stored() throws -> (payload: [UInt8], event: StaffEvent) {
        let payload = try encodedPayload()
        return (payload, try Self.decode(type: type, schemaVersion: schemaVersion, payload: payload) ?? self)
    }

    /// Reads a stored event; unknown types are nil.
    public static func decode(type: String, schemaVersion: Int, payload: [UInt8]) throws -> StaffEvent? {
        guard let registration = registry[type] else { return nil }
        return try registration.read(payload)
    }
}

extension StaffEvent.Kind {
    public var registration: StaffEvent.Registration {
        guard let registration = StaffEvent.registry[rawValue] else { preconditionFailure("\(rawValue) is not registered") }
        return registration
    }

    /// The type its payload decodes as.
    public var payloadType: any Decodable.Type { registration.payloadType }

    /// The `StaffCommand`s whose decision can append it.
    public var emittedBy: [String] { registration.emittedBy }
}
