import Foundation

extension AccountState {
    /// The pending link `id` when it is for `purpose` and not past its time at `now`: what every
    /// link's confirmation checks first, and what the link pages' `GET` shows.
    public func liveLink(_ id: UUID, purpose: PendingLink.Purpose, at now: Date) -> PendingLink? {
        guard let link = pendingLinks[id], link.purpose == purpose, link.expiresAt > now else { return nil }
        return link
    }
}
