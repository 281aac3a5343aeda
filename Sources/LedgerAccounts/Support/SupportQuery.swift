import Foundation
import LedgerIdentity

/// What support searches by: one identifier, matched exactly (never a part of a name or
/// address: a search is a keyed lookup, as a sign-in's is).
public enum SupportQuery: Sendable, Equatable {
    case email(String)
    case phone(String)
    /// `usr_…` (the user id the app shows) or the account id.
    case userID(String)
    case handle(String)
}
