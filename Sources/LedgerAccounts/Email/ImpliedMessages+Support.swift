import Foundation
import LedgerIdentity

extension ImpliedMessages {
    /// The owner's notice of a support call that changed something (a repeated disable, or a
    /// sign-out with no session left, changes nothing and tells nobody): `changed_by_support`
    /// to every way the account reached them before the change, as the method notices go
    /// (`contacts`), so an intruder who added an address of their own before calling support
    /// is not the only one told. Neither the operator nor the reason is told.
    func supportNotices(for events: [AccountEvent], before: AccountState, after: AccountState, at time: Date) -> [OutboxMessage] {
        guard case .admin(let action, let record) = events.first, action != .viewed, events.count > 1 else { return [] }
        var details = ["action": action.rawValue, "changed_at": RFC3339.format(time)]
        if let method = record.method { details["method"] = method }
        return Self.contacts(before: before, after: after, events: events).map { recipient in
            var told = details
            if recipient.channel == .email { told["secure_account"] = Self.secureAccountAdvice }
            return OutboxMessage(channel: recipient.channel, to: recipient.address, template: Self.changedBySupportTemplate, details: told)
        }
    }
}
