import Foundation
import LedgerIdentity
import Synchronization

/// The message language of accounts read lately (`AccountService.messageLanguage`), kept a
/// minute: a signed-in caller's refusals then cost one read of the account a minute, not one
/// each (a loop of cheap `422`s would otherwise fold the account every time). A choice made
/// meanwhile shows within the minute.
public final class RecentLanguages: Sendable {
    static let lifetime: TimeInterval = 60
    static let capacity = 10_000

    private let entries = Mutex<[UUID: (language: Language?, until: Date)]>([:])

    public init() {}

    /// The language kept for `accountID` until its minute is up; `.some(nil)` for an account
    /// known to have none.
    func language(of accountID: UUID, at now: Date) -> Language?? {
        entries.withLock { entries in
            guard let entry = entries[accountID], entry.until > now else { return nil }
            return .some(entry.language)
        }
    }

    /// How many accounts it holds.
    var count: Int { entries.withLock { $0.count } }

    func keep(_ language: Language?, of accountID: UUID, at now: Date) {
        entries.withLock { entries in
            if entries.count >= Self.capacity {
                entries = entries.filter { $0.value.until > now }
                // All live: a flood of accounts; start again rather than grow.
                if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[accountID] = (language, now.addingTimeInterval(Self.lifetime))
        }
    }
}
