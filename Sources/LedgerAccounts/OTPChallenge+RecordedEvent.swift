import Foundation
import LedgerEventStore
import LedgerIdentity

extension OTPChallenge {
    /// Folds a stored event (unknown or shredded ones only move the version).
    mutating func apply(_ recorded: RecordedEvent) throws -> OTPEvent? {
        guard let payload = recorded.payload,
              let event = try OTPEvent.decode(type: recorded.type, schemaVersion: recorded.schemaVersion, payload: payload)
        else {
            version += 1
            return nil
        }
        self = evolve(self, event, at: recorded.recordedAt)
        return event
    }
}
