import Foundation
import LedgerCrypto

/// Decides a staff command's events (docs/support.md "The console"). Pure.
public func decide(_ state: StaffState, _ command: StaffCommand, now: Date) throws -> [StaffEvent] {
    switch command {
    case .invite(let email, let role, let tokenHash, let expiresAt):
        guard !state.isRemoved else { throw StaffError(.noStaff, "This staff member was removed; add them again as new.") }
        guard state.passkeys.isEmpty else { throw StaffError(.alreadyStaff, "This person is on staff and has a passkey already.") }
        return [.invited(.init(email: email, role: role, invitationTokenHash: tokenHash, expiresAt: expiresAt))]

    case .registerPasskey(let passkey, let presented):
        guard state.exists, !state.isRemoved, let invitation = state.invitation, now < invitation.expiresAt,
            ConstantTime.equals(Array(invitation.tokenHash.utf8), Array(presented.utf8))
        else { throw StaffError.invitationExpired }
        return [.passkeyRegistered(passkey)]

    case .signIn(let passkeyID, let signCount, let session):
        guard state.exists, !state.isRemoved, let passkey = state.passkeys[passkeyID] else { throw StaffError.invalidCredential }
        try checkCounter(stored: passkey.signCount, presented: signCount)
        return [
            .signedIn(
                .init(
                    sessionID: session.sessionID, tokenHash: session.tokenHash, expiresAt: session.expiresAt, passkeyID: passkeyID,
                    signCount: signCount))
        ]

    case .confirmPasskey(let passkeyID, let signCount, let sessionID):
        guard !state.isRemoved, state.sessions[sessionID]?.isLive(at: now) == true else { throw StaffError.sessionEnded }
        guard let passkey = state.passkeys[passkeyID] else { throw StaffError.invalidCredential }
        try checkCounter(stored: passkey.signCount, presented: signCount)
        return [.passkeyConfirmed(.init(sessionID: sessionID, passkeyID: passkeyID, signCount: signCount))]

    case .signOut(let sessionID):
        guard let session = state.sessions[sessionID], session.endedAt == nil else { return [] }
        return [.signedOut(.init(sessionID: sessionID, reason: "signed_out"))]

    case .remove:
        guard state.exists else { throw StaffError(.noStaff, "No such staff member.") }
        guard !state.isRemoved else { return [] }
        let live = state.sessions.values.filter { $0.endedAt == nil }.sorted { $0.startedAt < $1.startedAt }
        return [.removed(.init())] + live.map { .signedOut(.init(sessionID: $0.id, reason: "staff_removed")) }
    }
}

/// A non-zero counter must grow (a copied authenticator's would not); zero on both sides is a
/// synced passkey's, and fine (docs/passkeys.md).
private func checkCounter(stored: Int64, presented: Int64) throws {
    guard presented == 0 && stored == 0 || presented > stored else { throw StaffError.invalidCredential }
}

/// Applies one staff event.
public func evolve(_ state: StaffState, _ event: StaffEvent, at recordedAt: Date) -> StaffState {
    var next = state
    next.version += 1
    switch event {
    case .invited(let invited):
        next.email = invited.email
        next.role = invited.role
        next.invitedAt = next.invitedAt ?? recordedAt
        next.invitation = (invited.invitationTokenHash, invited.expiresAt)
    case .passkeyRegistered(let passkey):
        next.passkeys[passkey.passkeyID] = passkey
        next.invitation = nil
    case .signedIn(let signedIn):
        next.passkeys[signedIn.passkeyID]?.signCount = signedIn.signCount
        next.sessions[signedIn.sessionID] = .init(
            id: signedIn.sessionID, tokenHash: signedIn.tokenHash, startedAt: recordedAt, expiresAt: signedIn.expiresAt, endedAt: nil,
            confirmedAt: recordedAt)
    case .passkeyConfirmed(let confirmed):
        next.passkeys[confirmed.passkeyID]?.signCount = confirmed.signCount
        next.sessions[confirmed.sessionID]?.confirmedAt = recordedAt
    case .signedOut(let signedOut):
        next.sessions[signedOut.sessionID]?.endedAt = recordedAt
    case .removed:
        next.removedAt = recordedAt
        next.invitation = nil
    }
    return next
}
