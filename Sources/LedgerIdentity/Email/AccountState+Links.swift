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

    /// A link of `purpose` went out at `time`. What can no longer matter goes first: links past
    /// their expiry, and send times older than any send window may be or beyond the most any
    /// limit reads (`LinkResendPolicy.longestWindow`, `.largestLimit`: the fold reads no
    /// configuration), so strangers asking for resets of someone's address cannot grow that
    /// account's state (or its snapshot) without bound.
    mutating func linkSent(_ purpose: PendingLink.Purpose, at time: Date) {
        pendingLinks = pendingLinks.filter { $0.value.expiresAt > time }
        if let pending = pendingEmail, pendingLinks[pending.linkID] == nil { pendingEmail = nil }
        for (sentPurpose, times) in linkSendTimes {
            linkSendTimes[sentPurpose] = Array(
                times.filter { $0 > time.addingTimeInterval(-LinkResendPolicy.longestWindow) }.suffix(LinkResendPolicy.largestLimit))
        }
        linkSendTimes[purpose, default: []].append(time)
    }
}
