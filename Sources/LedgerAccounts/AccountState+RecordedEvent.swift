import Foundation
import LedgerEventStore
import LedgerIdentity

extension AccountState {
    /// Applies a stored event to the state; returns the decoded event, or nil when the event
    /// is of a type this version does not know or its payload was crypto-shredded (the
    /// version still moves, so it keeps matching the stream).
    mutating func apply(_ recorded: RecordedEvent) throws -> AccountEvent? {
        guard let payload = recorded.payload,
              let event = try AccountEvent.decode(type: recorded.type, schemaVersion: recorded.schemaVersion, payload: payload)
        else {
            version += 1
            return nil
        }
        self = evolve(self, event, at: recorded.recordedAt)
        return event
    }
}
