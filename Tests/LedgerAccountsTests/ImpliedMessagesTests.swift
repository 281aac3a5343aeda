import Foundation
import LedgerAccounts
import LedgerCrypto
import LedgerIdentity
import Testing

/// The alerts an account's events imply, to its verified address only.
@Suite("Implied messages: the alerts an account's events send")
struct ImpliedMessagesTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)

    func account(verified: Bool) -> AccountState {
        var events: [AccountEvent] = [.registered(.init(email: "ana@example.com", displayName: nil, method: "email"))]
        if verified { events.append(.emailVerified(.init(email: "ana@example.com"))) }
        return events.reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
    }

    @Test("a day's limit of wrong codes tells the verified address when codes open again, and from where; an unverified one is not told")
    func dailyLimit() throws {
        let messages = ImpliedMessages(masterKey: try MasterKey.generate())
        let until = now.addingTimeInterval(86_400)
        let signIn = AccountEvent.mfaDailyLimitReached(.init(until: until, sessionID: nil))
        let sent = try messages.messages(for: [signIn], before: account(verified: true), at: now)
        #expect(sent.count == 1)
        #expect(sent.first?.channel == .email && sent.first?.to == "ana@example.com")
        #expect(sent.first?.template == ImpliedMessages.twoFactorLimitReachedTemplate)
        #expect(
            sent.first?.details == [
                "paused_until": RFC3339.format(until), "reached_at": RFC3339.format(now), "during": "sign_in",
                "secure_account": ImpliedMessages.secureAccountAdvice,
            ])
        #expect(sent.first?.code == nil && sent.first?.link == nil && sent.first?.token == nil)
        let reauth = AccountEvent.mfaDailyLimitReached(.init(until: until, sessionID: UUID()))
        #expect(try messages.messages(for: [reauth], before: account(verified: true), at: now).first?.details?["during"] == "reauth")
        #expect(try messages.messages(for: [signIn], before: account(verified: false), at: now).isEmpty)
    }
}
