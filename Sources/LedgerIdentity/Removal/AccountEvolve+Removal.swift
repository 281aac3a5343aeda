import Foundation

/// `evolve` for the removal area's events: disabling, holds, deletion and the purge.
func evolveRemoval(_ state: inout AccountState, _ event: AccountEvent, at recordedAt: Date) {
    switch event {
    case .purged(let purged):
        state.purgedAt = recordedAt
        state.deletedAt = state.deletedAt ?? purged.deletedAt ?? recordedAt
    case .deletionScheduled(let scheduled):
        state.deletedAt = recordedAt
        state.purgeAfter = scheduled.purgeAfter
    case .holdPlaced(let hold):
        state.holds[hold.ref] = hold
    case .holdReleased(let released):
        state.holds[released.ref] = nil
    case .holdLapsed(let lapsed):
        state.holds[lapsed.ref] = nil
    case .accountDisabled(let disabled):
        state.disabledAt = recordedAt
        state.disabledReason = disabled.reason
    case .accountEnabled:
        state.disabledAt = nil
        state.disabledReason = nil
    case .deletionRequested:
        state.deletionRequestedAt = recordedAt
    default:
        preconditionFailure("evolve routes \(event.type) elsewhere")
    }
}
