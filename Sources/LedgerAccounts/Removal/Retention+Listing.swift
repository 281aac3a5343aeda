import Foundation
import LedgerIdentity

extension Retention {
    /// An identifier kept from other accounts for a while (`signup_cooldowns`): by its keyed hash,
    /// until when, and why.
    public struct Listing: Sendable, Equatable {
        public enum Reason: String, Sendable {
            /// A deleted account's verified identifier, for the re-signup cooldown (`409 signup_cooldown`).
            case deleted
            /// The address an email change or removal took away, while its revert link lives
            /// (`409 email_held`): whoever made the change must not take it and block the way back.
            case held
        }

        /// HMAC-SHA256 (hex) of the identifier (`Retention.key`).
        public let key: String
        public let until: Date
        public let reason: Reason

        public init(key: String, until: Date, reason: Reason) {
            self.key = key
            self.until = until
            self.reason = reason
        }

        /// What `events` put on the list.
        public static func listed(by events: [AccountEvent]) -> [Listing] {
            events.flatMap { event -> [Listing] in
                switch event {
                case .deletionScheduled(let scheduled):
                    return scheduled.cooldownKeys.map { Listing(key: $0, until: scheduled.cooldownUntil, reason: .deleted) }
                case .emailChanged(let changed):
                    return changed.previousEmailKey.map { [Listing(key: $0, until: changed.revertExpiresAt, reason: .held)] } ?? []
                case .emailRemoved(let removed):
                    guard let key = removed.emailKey, let until = removed.revertExpiresAt else { return [] }
                    return [Listing(key: key, until: until, reason: .held)]
                default:
                    return []
                }
            }
        }
    }

    /// The refusal of a claim of a listed identifier.
    package func refusal(_ reason: Listing.Reason) -> IdentityError {
        switch reason {
        case .deleted: return cooldownError
        case .held: return Self.heldError
        }
    }

    /// `409 email_held`: the address another account gave up in a change or removal it may still revert.
    public static let heldError = IdentityError(.emailHeld, "This email was recently used by another account. Try again later.")
}
