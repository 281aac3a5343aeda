import Foundation
import LedgerEvents
import LedgerIdentity

/// An account as it was at `at`: the fold of its events recorded at or before then.
public struct AccountPointInTime: Sendable {
    public let at: Date
    public let state: AccountState

    public init(at: Date, state: AccountState) {
        self.at = at
        self.state = state
    }

    /// `active`, `disabled` (by an operator), `deleted` (awaiting purge) or `purged`.
    public var status: String {
        if state.purgedAt != nil { return "purged" }
        if state.isDeleted { return "deleted" }
        return state.isDisabled ? "disabled" : "active"
    }
}

/// What auditors and compliance jobs read of one account: its whole history, its state at any
/// instant, and whether its chain verifies. `AccountAudit` answers it from the event store.
public protocol AccountAuditing: Sendable {
    /// The account stream's events in version order; nil when no such account exists.
    func history(_ accountID: UUID) async throws -> [RecordedEvent]?
    /// The account folded up to `at`; nil when it had no event by then.
    func state(_ accountID: UUID, at: Date) async throws -> AccountPointInTime?
    /// The account stream's chain check; nil when no such account exists.
    func verify(_ accountID: UUID) async throws -> ChainVerification?
}
