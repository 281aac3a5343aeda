import Foundation

/// One event type as a catalogue's registry holds it (`AccountEvent.registrations`,
/// `OTPEvent.registrations`): its kind, the payload type that reads it, how a payload becomes
/// the event, and the commands whose decision appends it.
public struct EventRegistration<Event: Sendable, Kind: RawRepresentable & Sendable>: Sendable where Kind.RawValue == String {
    public let kind: Kind
    /// The type its payload decodes as.
    public var payloadType: any Decodable.Type { payload }
    private let payload: any (Decodable & Sendable).Type
    /// The commands whose decision (`decide`) can append it; none for one a worker appends.
    public let emittedBy: [String]
    /// Reads a stored payload of the current schema version.
    let read: @Sendable ([UInt8]) throws -> Event

    init<Payload: Decodable & Sendable>(
        _ kind: Kind, _ payloadType: Payload.Type, _ event: @escaping @Sendable (Payload) -> Event, emittedBy: [String]
    ) {
        self.kind = kind
        self.payload = payloadType
        self.emittedBy = emittedBy
        self.read = { event(try AccountEvent.decoder.decode(Payload.self, from: $0)) }
    }

    /// The registrations by stored type name.
    static func registry(_ registrations: [EventRegistration]) -> [String: EventRegistration] {
        Dictionary(registrations.map { ($0.kind.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
