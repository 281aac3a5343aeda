import Foundation
import LedgerEventStore
import LedgerIdentity

/// A state folded from one stream's stored events (an account, an OTP request).
protocol StoredEventFolding: SendableMetatype {
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
        let event = try Self.decode(recorded)
        apply(event, recordedAt: recorded.recordedAt)
        return event
    }

    /// Applies an event decoded beforehand (`decodeConcurrently`); nil moves the version only.
    mutating func apply(_ event: Event?, recordedAt: Date) {
        guard let event else {
            version += 1
            return
        }
        evolve(with: event, at: recordedAt)
    }

    static func decode(_ recorded: RecordedEvent) throws -> Event? {
        guard let payload = recorded.payload else { return nil }
        return try decode(recorded, payload: payload)
    }

    /// Decodes many events on every core (decoding JSON is most of a long fold's time), in order.
    static func decodeConcurrently(_ recorded: ArraySlice<RecordedEvent>) async throws -> [Event?] where Event: Sendable {
        let workers = min(ProcessInfo.processInfo.activeProcessorCount, recorded.count / 256)
        guard workers > 1 else { return try recorded.map(decode) }
        let chunk = (recorded.count + workers - 1) / workers
        return try await withThrowingTaskGroup(of: (Int, [Event?]).self) { group in
            for worker in 0..<workers {
                let start = recorded.startIndex + worker * chunk
                let part = recorded[start..<min(start + chunk, recorded.endIndex)]
                group.addTask { (worker, try part.map(decode)) }
            }
            var parts = [[Event?]](repeating: [], count: workers)
            for try await (worker, decoded) in group { parts[worker] = decoded }
            return parts.flatMap { $0 }
        }
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
