import Foundation
import LedgerIdentity
import Testing

@Suite("decide: links that sign in")
struct LinkSignInDecideTests {
    let base = DecideTests()
    var now: Date { base.now }

    /// The device the account signed up on (`registered`).
    let knownDevice = UUID()

    /// A registered account whose sign-up came from `knownDevice`.
    func registered(link: UUID) throws -> AccountState {
        base.apply(
            try base.registered(link: link),
            [
                .sessionStarted(
                    .init(
                        sessionID: UUID(), method: "email", device: "iPhone", accessTokenHash: "a", refreshTokenHash: "r",
                        accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(3600), deviceID: knownDevice)
                )
            ])
    }

    func session(challenge: Bool = true, device: UUID? = nil) -> AccountCommand.NewSession {
        .init(
            sessionID: UUID(), method: "email_link", device: "iPad", tokens: base.tokens("link"),
            stepUp: challenge ? .init(challengeID: UUID(), tokenHash: "th", expiresAt: now.addingTimeInterval(300), linkToken: nil) : nil,
            deviceID: device ?? knownDevice)
    }

    func event(_ events: [AccountEvent]) -> [String] { events.map(\.type) }

    @Test("the confirmation, then the session, in one decision: the address proven first, the session on the state it leaves")
    func verifiesThenSignsIn() throws {
        let link = UUID()
        let state = try registered(link: link)
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
            try registered(link: link),
            [.totpEnrolmentStarted(.init(secret: "s")), .totpCodeUsed(.init(step: 1)), .totpEnabled(.init(recoveryCodeHashes: ["rc"]))])
        let events = try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session()), now: now)
        #expect(event(events) == ["email.verified", "mfa.challenge_issued"])
        #expect(throws: IdentityError.self) {
            try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session(challenge: false)), now: now)
        }
    }

    @Test("a device the account has not signed in on proves the address and gets no session (a squatter's account, a mistyped address)")
    func unknownDevice() throws {
        let link = UUID()
        let state = try registered(link: link)
        let events = try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session(device: UUID())), now: now)
        #expect(event(events) == ["email.verified"])
    }

    @Test("a disabled account proves its address and starts no session")
    func disabled() throws {
        let link = UUID()
        let state = base.apply(try registered(link: link), [.accountDisabled(.init(reason: "abuse"))])
        let events = try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session()), now: now)
        #expect(event(events) == ["email.verified"])
    }

    @Test("a deleted account's link is expired, and signs nobody in")
    func deleted() throws {
        let link = UUID()
        let state = base.apply(
            try registered(link: link), [.deletionScheduled(.init(purgeAfter: now, cooldownUntil: now, cooldownKeys: []))])
        #expect(throws: IdentityError.linkExpired) {
            try decide(state, .signInByLink(.confirmVerificationLink(linkID: link), session()), now: now)
        }
    }
}
