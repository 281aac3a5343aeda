import Foundation
import LedgerEventStore
import LedgerIdentity

/// What auditors and compliance jobs read of one account (API.md "Events and audit"): its
/// whole history, its state as it was at any instant, and whether its chain verifies.
public struct AccountAudit: Sendable {
    let store: EventStore

    public init(store: EventStore) {
        self.store = store
    }

    /// An account as it was at `at`: the fold of its events recorded at or before then.
    public struct PointInTime: Sendable {
        public let at: Date
        public let state: AccountState

        /// `active`, `deleted` (awaiting purge) or `purged`.
        public var status: String {
            if state.purgedAt != nil { return "purged" }
            return state.isDeleted ? "deleted" : "active"
        }
    }

    /// The account stream's events in version order; nil when no such account exists.
    public func history(_ accountID: UUID) async throws -> [RecordedEvent]? {
        let events = try await store.readStream(accountID)
        return events.isEmpty ? nil : events
    }

    /// The account folded up to `at` (the first event recorded after `at` ends the fold, so
    /// the state is always a prefix of the stream); nil when it had no event by then.
    public func state(_ accountID: UUID, at: Date) async throws -> PointInTime? {
        var state = AccountState(accountID: accountID)
        var fromVersion: Int64 = 1
        let pageSize = 5000
        while true {
            let page = try await store.readStream(accountID, fromVersion: fromVersion, limit: pageSize)
            let cut = page.firstIndex { $0.recordedAt > at } ?? page.endIndex
            let events = try await AccountState.decodeConcurrently(page[..<cut])
            for (event, recorded) in zip(events, page[..<cut]) { state.apply(event, recordedAt: recorded.recordedAt) }
            if cut < page.endIndex || page.count < pageSize { break }
            fromVersion += Int64(pageSize)
        }
        return state.version == 0 ? nil : PointInTime(at: at, state: state)
    }

    /// The account stream's chain check; nil when no such account exists.
    public func verify(_ accountID: UUID) async throws -> ChainVerification? {
        let verification = try await store.verify(streamID: accountID)
        return verification.ok && verification.events == 0 ? nil : verification
    }
}
