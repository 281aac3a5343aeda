import Foundation

extension AccountState {
    /// The pending link `id` when it is for `purpose`, not past its time at `now` and (a re-auth
    /// link) its session still live: what every link's confirmation checks first, and what the
    /// link pages' `GET` shows.
    public func liveLink(_ id: UUID, purpose: PendingLink.Purpose, at now: Date) -> PendingLink? {
        guard let link = pendingLinks[id], link.purpose == purpose, link.expiresAt > now else { return nil }
        // A re-auth link grants its session: with that session ended, it grants nothing.
        if purpose == .reauth, link.sessionID.flatMap({ sessions[$0]?.isActive }) != true { return nil }
        return link
    }
}
