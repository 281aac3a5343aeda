import Foundation
import LedgerIdentity

/// What the support desk sees of an account (`GET /admin/accounts/{id}`): its status, how it
/// signs in, its sessions and holds. A purged account shows its status and nothing personal.
public struct SupportSummary: Sendable, Equatable {
    /// `active`, `disabled`, `deletion_scheduled` or `purged`.
    public enum Status: String, Sendable {
        case active, disabled
        case deletionScheduled = "deletion_scheduled"
        case purged
    }

    public let state: AccountState
    public let status: Status
    /// The sessions that still live (not revoked, refresh token not expired), newest use first.
    public let liveSessions: [AccountState.Session]
    /// When the newest session started.
    public let lastSignInAt: Date?

    public init(_ state: AccountState, at now: Date) {
        status =
            state.purgedAt != nil ? .purged : state.isDeleted ? .deletionScheduled : state.isDisabled ? .disabled : .active
        // Nothing personal of a purged account: its fold has nothing but the purge left to read.
        self.state = status == .purged ? AccountState(accountID: state.accountID) : state
        liveSessions = self.state.sessions.values.filter { $0.isActive && $0.refreshExpiresAt > now }
            .sorted { ($0.lastUsedAt, $0.createdAt) > ($1.lastUsedAt, $1.createdAt) }
        lastSignInAt = status == .purged ? nil : state.sessions.values.map(\.createdAt).max()
    }

    /// The passkeys, oldest first.
    public var passkeys: [AccountState.Passkey] { state.passkeysByAge }

    /// The holds, by reference.
    public var holds: [Hold] { state.holds.values.sorted { $0.ref < $1.ref } }
}
