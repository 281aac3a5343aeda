import Foundation
import LedgerIdentity
import Testing

@Suite("decide: links that sign in")
struct LinkSignInDecideTests {
    let base = DecideTests()
    var now: Date { base.now }

    func session(challenge: Bool = true) -> AccountCommand.NewSession {
        .init(
            sessionID: UUID(), method: "email_link", device: "iPad", tokens: base.tokens("link"),
            stepUp: challenge ? .init(challengeID: UUID(), tokenHash: "th", expiresAt: now.addingTimeInterval(300), linkToken: nil) : nil)
    }

    func event(_ events: [AccountEvent]) -> [String] { events.map(\.type) }

    @Test("the confirmation, then the session, in one decision: the address proven first, the session on the state it leaves")
    func verifiesThenSignsIn() throws {
        let link = UUID()
        let state = try base.registered(link: link)
        let events = try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session()), now: now)
        #expect(event(events).prefix(2) == ["email.verified", "session.started"])
        #expect(AccountCommand.signInByLink(.confirmVerificationLink(linkID: link), session()).undeclared(in: events).isEmpty)
        // Spent: the same link signs in nobody, and nothing is appended.
        let after = base.apply(state, events)
        #expect(throws: IdentityError.linkExpired) {
            try decide(after, .signInByLink(.confirmVerificationLink(linkID: link), session()), now: now)
        }
    }

    @Test("two-factor on: the address is proven and a challenge issued instead of the session; none without a challenge")
    func secondFactor() throws {
        let link = UUID()
        let state = base.apply(
            try base.registered(link: link),
            [.totpEnrolmentStarted(.init(secret: "s")), .totpCodeUsed(.init(step: 1)), .totpEnabled(.init(recoveryCodeHashes: ["rc"]))])
        let events = try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session()), now: now)
        #expect(event(events) == ["email.verified", "mfa.challenge_issued"])
        #expect(throws: IdentityError.self) {
            try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session(challenge: false)), now: now)
        }
    }

    @Test("a disabled account proves its address and starts no session")
    func disabled() throws {
        let link = UUID()
        let state = base.apply(try base.registered(link: link), [.accountDisabled(.init(reason: "abuse"))])
        let events = try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session()), now: now)
        #expect(event(events) == ["email.verified"])
    }

    @Test("a deleted account's link is expired, and signs nobody in")
    func deleted() throws {
        let link = UUID()
        let state = base.apply(
            try base.registered(link: link), [.deletionScheduled(.init(purgeAfter: now, cooldownUntil: now, cooldownKeys: []))])
        #expect(throws: IdentityError.linkExpired) {
            try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session()), now: now)
        }
    }
}
