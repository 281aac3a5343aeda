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

    @Test(
        "a support change tells the owner once (verified email, else SMS), without the operator or the reason; a look or a no-op tells nobody"
    )
    func supportNotice() throws {
        let messages = ImpliedMessages(masterKey: try MasterKey.generate())
        let record = AccountEvent.AdminRecord(keyID: UUID(), operatorName: "Nino", reason: "ticket 4411")
        let signedOut: [AccountEvent] = [
            .admin(.signedOut, record), .sessionRevoked(.init(sessionID: UUID(), reason: "signed_out_by_support")),
        ]
        let told = try messages.messages(for: signedOut, before: account(verified: true), at: now)
        #expect(told.map(\.template) == [ImpliedMessages.changedBySupportTemplate] && told.first?.to == "ana@example.com")
        #expect(told.first?.details?["action"] == "signed_out" && told.first?.details?["changed_at"] == RFC3339.format(now))
        #expect(told.first?.details?.values.contains { $0.contains("Nino") || $0.contains("4411") } == false)
        let phoneOnly = [
            AccountEvent.registered(.init(email: nil, displayName: nil, method: "phone")),
            .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
        ]
        .reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        let bySMS = try messages.messages(for: signedOut, before: phoneOnly, at: now)
        #expect(bySMS.first?.channel == .sms && bySMS.first?.to == "+995511200300")
        #expect(try messages.messages(for: [.admin(.viewed, record)], before: account(verified: true), at: now).isEmpty)
        #expect(try messages.messages(for: [.admin(.disabled, record)], before: account(verified: true), at: now).isEmpty)
    }

    @Test("an operator's name and a change's reason: trimmed, bounded, no control characters")
    func supportInput() throws {
        #expect(SupportDesk.checkedOperator("  Nino (support) ") == "Nino (support)")
        #expect(SupportDesk.checkedOperator("👩‍💻 Nino") == "👩‍💻 Nino", "the joiner of an emoji is fine")
        #expect(try SupportDesk.checkedReason("caller said «მადლობა»") == "caller said «მადლობა»")
        for refused in [nil, "", "  ", String(repeating: "n", count: 201), "Nino\u{7}", "a\u{0}b", "Nino\u{202E}"] as [String?] {
            #expect(SupportDesk.checkedOperator(refused) == nil)
        }
        #expect(try SupportDesk.checkedReason(" lost phone\nID checked ") == "lost phone\nID checked")
        // Combining marks count each; a bidi override and a zero-width space are refused.
        let stretched = "a" + String(repeating: "\u{301}", count: 600)
        for refused in ["", " ", String(repeating: "r", count: 501), "a\u{1b}[31m", stretched, "ok\u{202E}", "a\u{200B}b"] {
            #expect(throws: AccountService.ValidationFailure.self) { try SupportDesk.checkedReason(refused) }
        }
    }

    @Test("every change of how the account is reached tells the owner's established contact: its verified email, else its phone by SMS")
    func notices() throws {
        let messages = ImpliedMessages(masterKey: try MasterKey.generate())
        let session = UUID()
        var verified = account(verified: true)
        verified = evolve(
            verified,
            .sessionStarted(
                .init(
                    sessionID: session, method: "email", device: "iPhone · 321Fit 4.2", accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now, refreshExpiresAt: now)), at: now)
        func sent(_ events: [AccountEvent], before: AccountState) throws -> [OutboxMessage] {
            try messages.messages(for: events, before: before, at: now).filter { $0.channel != .provider }
        }
        let google = try sent(
            [.providerLinked(.init(provider: .google, subject: "g", email: nil, emailVerified: false, sessionID: session))],
            before: verified)
        #expect(google.map(\.template) == [ImpliedMessages.methodAddedTemplate])
        #expect(google.first?.to == "ana@example.com" && google.first?.channel == .email)
        #expect(google.first?.details?["method"] == "google" && google.first?.details?["device"] == "iPhone · 321Fit 4.2")
        #expect(google.first?.details?["changed_at"] == RFC3339.format(now) && google.first?.details?["secure_account"] != nil)
        #expect(google.first?.token == nil && google.first?.link == nil && google.first?.code == nil)
        #expect(
            try sent([.passwordSet(.init(passwordHash: "h", reason: .change, sessionID: session))], before: verified).map(\.template)
                == [ImpliedMessages.passwordChangedTemplate])
        // With the phone: a removed email is told on the phone (the address gets its own notice, with its way back).
        let withPhone = evolve(verified, .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)), at: now)
        let emailGone = try sent(
            [.emailRemoved(.init(email: "ana@example.com", passwordRemoved: true, sessionID: session))], before: withPhone)
        #expect(emailGone.map(\.to) == ["+995511200300"] && emailGone.first?.channel == .sms)
        #expect(emailGone.first?.template == ImpliedMessages.methodRemovedTemplate && emailGone.first?.details?["method"] == "email")
        // A changed number: told on the number the account had, not the new one.
        let phoneOnly = [
            AccountEvent.registered(.init(email: nil, displayName: nil, method: "phone")),
            .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
        ].reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        let moved = try sent(
            [.phoneChanged(.init(phone: "+995511200399", region: "GE", previousPhone: "+995511200300", requestID: nil))], before: phoneOnly)
        #expect(moved.map(\.to) == ["+995511200300"])
        // An unverified address is nobody's to tell; the removals of a revert are the reverter's to read in its answer.
        #expect(
            try sent(
                [.providerLinked(.init(provider: .apple, subject: "a", email: nil, emailVerified: false))], before: account(verified: false)
            ).isEmpty)
        #expect(try sent([.phoneRemoved(.init(phone: "+995511200300", reason: .emailReverted))], before: withPhone).isEmpty)
        // Every contact the account had before is told: an intruder's address added first is not the only one.
        let both = try sent([.phoneRemoved(.init(phone: "+995511200300"))], before: withPhone)
        #expect(both.map(\.to) == ["ana@example.com", "+995511200300"] && both.map(\.channel) == [.email, .sms])
        // A revert tells the address it displaced, and nobody else.
        let displaced = try sent([.emailReverted(.init(email: "old@example.com", linkID: UUID()))], before: verified)
        #expect(displaced.map(\.to) == ["ana@example.com"] && displaced.first?.details?["method"] == "email")
        #expect(AccountService.isRedactedInExport("email_key") && AccountService.isRedactedInExport("revert_token_sha256"))
        // A sign-up tells nobody.
        #expect(
            try sent(
                [.registered(.init(email: "bo@example.com", displayName: nil, method: "email"))], before: AccountState(accountID: UUID())
            ).isEmpty)
    }

    @Test("messages go in the language the account had before the change: a sign-in does not pick its own alert's language")
    func localeBeforeTheChange() {
        func signedIn(_ state: AccountState, locale: String?) -> AccountState {
            evolve(
                state,
                .sessionStarted(
                    .init(
                        sessionID: UUID(), method: "email", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                        accessExpiresAt: now, refreshExpiresAt: now, locale: locale)), at: now)
        }
        let fresh = account(verified: true)
        let georgian = signedIn(fresh, locale: "ka-GE")
        let intruder = signedIn(georgian, locale: "xx")
        let alert = OutboxMessage(channel: .email, to: "ana@example.com", template: ImpliedMessages.newSignInTemplate)
        #expect(alert.inLocale(before: georgian, after: intruder, default: .en).locale == "ka-GE")
        // A message the change asked for, to an account that never said a language, takes the
        // change's; an alert about the change never does (an intruder's first sign-in would
        // choose the language of the owner's alert): the default.
        #expect(alert.inLocale(before: fresh, after: georgian, default: .en).locale == "ka-GE")
        #expect(alert.inLocale(before: fresh, after: nil, default: .en).locale == "en")
        // The browser that asked for it comes first.
        var asked = alert
        asked.requestedLanguage = .ru
        #expect(asked.inLocale(before: georgian, after: georgian, default: .en).locale == "ru")
        #expect(alert.inLocale(before: fresh, after: fresh, default: .en).locale == "en")
        #expect(alert.inLocale(before: fresh, after: fresh, default: .ru).locale == "ru")
        // A language the service does not write is no choice: the next one, else the default.
        #expect(alert.inLocale(before: intruder, after: intruder, default: .ka).locale == "ka")
        // One chosen in the profile comes before the sign-ins'.
        var chosen = georgian
        chosen.chosenLocale = "ru"
        #expect(alert.inLocale(before: chosen, after: chosen, default: .en).locale == "ru")
    }
}
