import Foundation
import LedgerCrypto

/// `decide` for disabling, holds and deletion.
func decideRemoval(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    let now = context.now
    switch command {
    case .disableAccount(let reason):
        try requireAccount(state)
        guard !state.isDisabled else { return [] }
        return [.accountDisabled(.init(reason: reason))]
            + revokeSessions(state, reason: "account_disabled", except: nil)
            + endPendingAccess(state, reason: .accountDisabled, except: nil, now: now)

    case .enableAccount:
        try requireAccount(state)
        // Apple asked for the deletion; holds only delay it. Enabling would reopen the account
        // to its other sign-in methods meanwhile.
        guard state.deletionRequestedAt == nil else {
            throw IdentityError(.deletionRequested, "This account's deletion was requested; it cannot be enabled.")
        }
        return state.isDisabled ? [.accountEnabled(.init())] : []

    case .completeRequestedDeletion(let purgeDelay, let cooldown, let cooldownKeys):
        try requireAccount(state)
        guard state.deletionRequestedAt != nil, state.deletionBlockers(at: now).isEmpty else { return [] }
        return scheduleDeletion(state, purgeDelay: purgeDelay, cooldown: cooldown, cooldownKeys: cooldownKeys, now: now)

    case .placeHold(let hold):
        guard !state.isDeleted else { throw IdentityError.accountDeleted }
        try requireAccount(state)
        if let existing = state.holds[hold.ref] {
            // Another backend's hold is not this key's to overwrite, nor to learn about.
            guard existing.isOwned(by: hold.keyID) else { throw IdentityError.holdNotFound }
            if existing == hold { return [] }
        }
        return [.holdPlaced(hold)]

    case .releaseHold(let ref, let keyID, let administrator):
        try requireAccount(state)
        guard let existing = state.holds[ref] else { return [] }
        guard administrator || existing.isOwned(by: keyID) else { throw IdentityError.holdNotFound }
        return [.holdReleased(.init(ref: ref, keyID: keyID))]

    case .lapseHolds:
        guard state.exists, !state.isDeleted else { return [] }
        return state.holds.values.filter { $0.hasLapsed(at: now) }.sorted { $0.ref < $1.ref }
            .map { .holdLapsed(.init(ref: $0.ref, startsAt: $0.startsAt)) }

    case .deleteAccount(let sessionID, let reauthTokenHash, let purgeDelay, let cooldown, let cooldownKeys):
        try requireAccount(state)
        // Blockers before re-auth (docs/architecture.md "Deletion"): no one verifies it's them
        // for a deletion that cannot happen yet.
        let blockers = state.deletionBlockers(at: now)
        guard blockers.isEmpty else { throw DeletionBlocked(blockers: blockers) }
        try state.requireReauth(.deleteAccount, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return scheduleDeletion(state, purgeDelay: purgeDelay, cooldown: cooldown, cooldownKeys: cooldownKeys, now: now)
    default:
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
}
