import Foundation
import LedgerIdentity

/// The notices of every change to how an account is reached (docs/accounts.md, "Recovery after a takeover"):
/// a method added or removed, a password changed. Each goes, with no token, to the owner's
/// established contact, so whoever changed it cannot quietly lock the owner out.
extension ImpliedMessages {
    /// `details.method` (`phone`, `email`, `apple`, `google`, `passkey`) was added, or removed.
    public static let methodAddedTemplate = "method_added"
    public static let methodRemovedTemplate = "method_removed"
    /// The password was changed or reset.
    public static let passwordChangedTemplate = "password_changed"

    /// One notice to send: its template, the method it is about, and the session that made the change.
    struct Notice: Equatable {
        let template: String
        let method: String?
        let sessionID: UUID?
    }

    /// The notices `events` imply. A sign-up tells nobody (there is no one else to tell), and
    /// neither do the removals of a revert or of a reset that proved the address: the person who
    /// did it sees them in the answer.
    func notices(for events: [AccountEvent], before: AccountState, after: AccountState, at time: Date) -> [OutboxMessage] {
        guard before.exists, !after.isDeleted else { return [] }
        var notices: [Notice] = []
        for event in events {
            let notice: Notice?
            switch event {
            case .phoneLinked(let linked): notice = Notice(template: Self.methodAddedTemplate, method: "phone", sessionID: linked.sessionID)
            case .phoneChanged(let changed):
                notice = Notice(template: Self.methodAddedTemplate, method: "phone", sessionID: changed.sessionID)
            case .providerLinked(let linked):
                notice = Notice(template: Self.methodAddedTemplate, method: linked.provider.rawValue, sessionID: linked.sessionID)
            case .emailAdded(let added): notice = Notice(template: Self.methodAddedTemplate, method: "email", sessionID: added.sessionID)
            case .passwordSet(let set) where set.reason.isMethodAdded:
                notice = Notice(template: Self.methodAddedTemplate, method: "email", sessionID: set.sessionID)
            case .passwordSet(let set) where set.reason.isPasswordChange:
                notice = Notice(template: Self.passwordChangedTemplate, method: nil, sessionID: set.sessionID)
            case .phoneRemoved(let removed) where removed.reason == nil:
                notice = Notice(template: Self.methodRemovedTemplate, method: "phone", sessionID: nil)
            case .providerUnlinked(let unlinked) where unlinked.reason?.sendsRemovalNotice ?? true:
                notice = Notice(template: Self.methodRemovedTemplate, method: unlinked.provider.rawValue, sessionID: nil)
            case .emailRemoved(let removed) where removed.reason?.sendsRemovalNotice ?? true:
                notice = Notice(template: Self.methodRemovedTemplate, method: "email", sessionID: removed.sessionID)
            case .passkeyRegistered(let registered):
                notice = Notice(template: Self.methodAddedTemplate, method: "passkey", sessionID: registered.sessionID)
            case .passkeyRemoved(let removed) where removed.reason?.sendsRemovalNotice ?? true:
                notice = Notice(template: Self.methodRemovedTemplate, method: "passkey", sessionID: nil)
            default: notice = nil
            }
            if let notice, !notices.contains(where: { $0.template == notice.template && $0.method == notice.method }) {
                notices.append(notice)
            }
        }
        // A revert tells the address it displaced (no longer the account's), beside the rest:
        // should the revert be an intruder's (an old mailbox taken over), its owner learns of it.
        var recipients = Self.contacts(before: before, after: after, events: events)
        for case .emailReverted(let reverted) in events {
            guard let displaced = before.email, before.emailVerified,
                EmailAddress.normalize(displaced) != EmailAddress.normalize(reverted.email)
            else { continue }
            notices.append(Notice(template: Self.methodRemovedTemplate, method: "email", sessionID: nil))
            recipients = [(.email, displaced)]
        }
        return recipients.flatMap { recipient in
            notices.map { notice in
                var details = ["changed_at": RFC3339.format(time), "secure_account": Self.secureAccountAdvice]
                if let method = notice.method { details["method"] = method }
                let device = notice.sessionID.flatMap { before.sessions[$0]?.device ?? after.sessions[$0]?.device }
                details["device"] = device ?? DeviceLabel.unknown
                return OutboxMessage(channel: recipient.channel, to: recipient.address, template: notice.template, details: details)
            }
        }
    }

    /// A notice's recipient: an email address or a phone number (SMS).
    typealias Recipient = (channel: OutboxMessage.Channel, address: String)

    /// Where the owner is told: every way the account reached them before the change, its
    /// verified email (unless these events take it away: the removed address gets its own
    /// notice, with a way back) and its phone, by SMS; else what it has after. Before, not
    /// after, and all of them: whoever made the change may have added an address or number of
    /// their own first, which must not be the only one told.
    static func contacts(before: AccountState, after: AccountState, events: [AccountEvent]) -> [Recipient] {
        let emailRemoved = events.contains { if case .emailRemoved = $0 { true } else { false } }
        // A reset that proved the address for the first time: the others' ways in are gone.
        let addressProven = events.contains {
            if case .emailVerified(let verified) = $0 { verified.via == "password_reset" } else { false }
        }
        if addressProven, let email = after.email { return [(.email, email)] }
        var contacts: [Recipient] = []
        if let email = before.email, before.emailVerified, !emailRemoved { contacts.append((.email, email)) }
        if let phone = before.phone { contacts.append((.sms, phone)) }
        if !contacts.isEmpty { return contacts }
        if let email = after.email, after.emailVerified { return [(.email, email)] }
        if let phone = after.phone { return [(.sms, phone)] }
        return []
    }
}
