import Foundation
import LedgerAccounts
import LedgerEventStore
import LedgerIdentity

/// What auditors and compliance jobs read of one account (docs/architecture.md "Events and audit"; docs/events.md): its
/// whole history, its state as it was at any instant, and whether its chain verifies.
public struct AccountAudit: AccountAuditing {
    let store: EventStore

    public init(store: EventStore) {
        self.store = store
    }

    public typealias PointInTime = AccountPointInTime

    /// The account stream's events in version order; nil when no such account exists.
    public func history(_ accountID: UUID) async throws -> [RecordedEvent]? {
        let events = try await store.readStream(accountID)
        return events.isEmpty ? nil : events
    }

    /// The account folded up to `at` (the first event recorded after `at` ends the fold, so
    /// the state is always a prefix of the stream); nil when it had no event by then.
    public func state(_ accountID: UUID, at: Date) async throws -> PointInTime? {
        let state = try await store.client.withConnection { connection in
            try await AccountSnapshots.fold(accountID, at: at, store: store, on: connection).state
        }
        return state.version == 0 ? nil : PointInTime(at: at, state: state)
    }

    /// The account stream's chain check; nil when no such account exists.
    public func verify(_ accountID: UUID) async throws -> ChainVerification? {
        let verification = try await store.verify(streamID: accountID)
        return verification.ok && verification.events == 0 ? nil : verification
    }
}
