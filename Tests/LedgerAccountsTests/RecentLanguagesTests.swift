import Foundation
import LedgerIdentity
import Testing

@testable import LedgerAccounts

/// `RecentLanguages`: an account's language for its refusals, kept a minute, bounded.
@Suite("Recent languages")
struct RecentLanguagesTests {
    @Test("kept a minute, a known none too; a flood of accounts never grows it past its capacity")
    func keptAMinute() {
        let recent = RecentLanguages()
        let (ana, nino) = (UUID.random(), UUID.random())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(recent.language(of: ana, at: now) == nil)
        recent.keep(.ru, of: ana, at: now)
        recent.keep(nil, of: nino, at: now)
        #expect(recent.language(of: ana, at: now.addingTimeInterval(59)) == .some(.ru))
        #expect(recent.language(of: nino, at: now.addingTimeInterval(59)) == .some(nil))
        #expect(recent.language(of: ana, at: now.addingTimeInterval(60)) == nil)
        for _ in 0..<(RecentLanguages.capacity + 10) { recent.keep(.ka, of: UUID.random(), at: now) }
        #expect(recent.count <= RecentLanguages.capacity)
    }
}
