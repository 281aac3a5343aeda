import Foundation
import LedgerEventStore
import LedgerIdentity

/// A state folded from one stream's stored events (an account, an OTP request).
protocol StoredEventFolding {
    associatedtype Event
    var version: Int64 { get set }
    static func decode(_ recorded: RecordedEvent, payload: [UInt8]) throws -> Event?
    mutating func evolve(with event: Event, at recordedAt: Date)
}

extension StoredEventFolding {
    /// Applies a stored event; returns it decoded, or nil when it is of a type this version
    /// does not know or its payload was crypto-shredded (the version still moves, so it keeps
    /// matching the stream).
    mutating func apply(_ recorded: RecordedEvent) throws -> Event? {
        guard let payload = recorded.payload, let event = try Self.decode(recorded, payload: payload) else {
            version += 1
            return nil
        }
        evolve(with: event, at: recorded.recordedAt)
        return event
    }
}

extension AccountState: StoredEventFolding {
    static func decode(_ recorded: RecordedEvent, payload: [UInt8]) throws -> AccountEvent? {
        try AccountEvent.decode(type: recorded.type, schemaVersion: recorded.schemaVersion, payload: payload)
    }

    mutating func evolve(with event: AccountEvent, at recordedAt: Date) {
        LedgerIdentity.evolve(&self, event, at: recordedAt)
    }
}

extension OTPChallenge: StoredEventFolding {
    static func decode(_ recorded: RecordedEvent, payload: [UInt8]) throws -> OTPEvent? {
        try OTPEvent.decode(type: recorded.type, schemaVersion: recorded.schemaVersion, payload: payload)
    }

    mutating func evolve(with event: OTPEvent, at recordedAt: Date) {
        self = LedgerIdentity.evolve(self, event, at: recordedAt)
    }
}
