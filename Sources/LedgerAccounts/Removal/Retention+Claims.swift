import LedgerIdentity

extension Retention.Identifier {
    /// The identifiers `events` make the account's: an address, a number, a provider identity.
    public static func claimed(by events: [AccountEvent]) -> [Retention.Identifier] {
        events.compactMap { event in
            switch event {
            case .registered(let registered): return registered.email.map { .email(EmailAddress.normalize($0)) }
            case .emailAdded(let added): return .email(EmailAddress.normalize(added.email))
            case .emailChanged(let changed): return .email(EmailAddress.normalize(changed.email))
            case .emailReverted(let reverted): return .email(EmailAddress.normalize(reverted.email))
            case .phoneLinked(let linked): return .phone(linked.phone)
            case .phoneChanged(let changed): return .phone(changed.phone)
            case .providerLinked(let linked): return .provider(linked.provider, linked.subject)
            default: return nil
            }
        }
    }
}
