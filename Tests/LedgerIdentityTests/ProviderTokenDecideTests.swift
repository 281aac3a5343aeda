import Foundation
import LedgerIdentity
import Testing

@Suite("decide: provider refresh tokens, and a password for a provider's address")
struct ProviderTokenDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let session = UUID()

    static let apple = AccountState.ProviderToken(provider: .apple, subject: "a-1", clientID: "fit.321.ios", refreshToken: "r.apple")
    static let google = AccountState.ProviderToken(provider: .google, subject: "g-1", clientID: "321fit", refreshToken: "r.google")

    /// An Apple account (its address from Apple, `verified` or not) with Google linked too, a
    /// session, a grant ("g") of it, and the events given.
    func account(emailVerified: Bool = true, _ events: [AccountEvent] = []) -> AccountState {
        let setup: [AccountEvent] = [
            .registered(.init(email: "ana@example.com", displayName: nil, method: "apple")),
            .providerLinked(.init(provider: .apple, subject: "a-1", email: "ana@example.com", emailVerified: emailVerified)),
            .providerLinked(.init(provider: .google, subject: "g-1", email: nil, emailVerified: false)),
            .sessionStarted(
                .init(
                    sessionID: session, method: "apple", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
            .reauthGranted(
                .init(grantID: UUID(), sessionID: session, method: "google", tokenHash: "g", expiresAt: now.addingTimeInterval(900))),
        ]
        let verified: [AccountEvent] = emailVerified ? [.emailVerified(.init(email: "ana@example.com"))] : []
        return (setup + verified + events).reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
    }

    func stored(_ token: AccountState.ProviderToken) -> AccountEvent {
        .providerTokensStored(
            .init(provider: token.provider, subject: token.subject, clientID: token.clientID, refreshToken: token.refreshToken))
    }

    @Test("the sign-in merge joins only an account that still holds the address, verified, with no password and no second factor")
    func mergeRules() throws {
        // Google vouches for ana@, which this Apple account verified: the merge links Google.
        let google = AccountCommand.ProviderIdentityClaim(provider: .google, subject: "g-2", email: "Ana@Example.com", emailVerified: true)
        let unlinked = account().providerSubjects.filter { $0.key == .apple }
        var state = account()
        state.providerSubjects = unlinked
        #expect(try decide(state, .mergeProvider(google), now: now).map(\.type) == ["provider.linked"])
        // Each of these is link_required: the person proves the account once.
        var refused: [AccountState] = []
        refused.append(evolve(state, .passwordSet(.init(passwordHash: "h", reason: .reset)), at: now))
        refused.append(
            [
                .totpEnrolmentStarted(.init(secret: "s", sessionID: session)),
                .totpEnabled(.init(recoveryCodeHashes: [], sessionID: session)),
            ]
            .reduce(state) { evolve($0, $1, at: now) })
        var moved = state
        moved.email = "eve@example.com"
        refused.append(moved)
        var unverified = state
        unverified.emailVerified = false
        refused.append(unverified)
        for refusedState in refused {
            #expect(throws: IdentityError(.linkRequired, "Sign in to your account once to connect Google.")) {
                try decide(refusedState, .mergeProvider(google), now: now)
            }
        }
        // The provider must vouch for the address, and never by a private relay.
        var unvouched = google
        unvouched.emailVerified = false
        var relay = google
        relay.email = "x@privaterelay.appleid.com"
        for claim in [unvouched, relay] {
            #expect(throws: IdentityError.self) { try decide(state, .mergeProvider(claim), now: now) }
        }
    }

    @Test("a token is kept for the linked identity only; the same one again changes nothing, a newer one replaces it")
    func store() throws {
        let state = account()
        #expect(try decide(state, .storeProviderTokens(Self.apple), now: now) == [stored(Self.apple)])
        var other = Self.apple
        other.subject = "a-2"
        #expect(throws: IdentityError.self) { try decide(state, .storeProviderTokens(other), now: now) }
        let after = evolve(state, stored(Self.apple), at: now)
        #expect(after.providerTokens[.apple] == Self.apple)
        #expect(try decide(after, .storeProviderTokens(Self.apple), now: now).isEmpty)
        var newer = Self.apple
        newer.refreshToken = "r.apple.2"
        // Replaced, never revoked: revoking an older token would end the person's whole consent.
        #expect(try decide(after, .storeProviderTokens(newer), now: now) == [stored(newer)])
    }

    @Test("disconnecting a provider revokes its token only, and only when there is one")
    func disconnect() throws {
        let state = account([stored(Self.apple), stored(Self.google)])
        let events = try decide(state, .unlinkProvider(.apple, sessionID: session, reauthTokenHash: "g"), now: now)
        #expect(
            events == [
                .providerUnlinked(.init(provider: .apple, subject: "a-1")),
                .providerTokenRevoked(.init(provider: .apple, reason: "disconnected")),
            ])
        let after = events.reduce(state) { evolve($0, $1, at: now) }
        #expect(after.providerTokens[.apple] == nil && after.providerTokens[.google] == Self.google)
        let tokenless = account()
        #expect(
            try decide(tokenless, .unlinkProvider(.apple, sessionID: session, reauthTokenHash: "g"), now: now)
                == [.providerUnlinked(.init(provider: .apple, subject: "a-1"))])
    }

    @Test("a deletion revokes every stored token, whoever asked: the person, or Apple's account-delete")
    func deletion() throws {
        let state = account([stored(Self.apple), stored(Self.google)])
        let asked = try decide(
            state, .deleteAccount(sessionID: session, reauthTokenHash: "g", purgeDelay: 30, cooldown: 7, cooldownKeys: []), now: now)
        let revoked: [AccountEvent] = [
            .providerTokenRevoked(.init(provider: .apple, reason: "account_deleted")),
            .providerTokenRevoked(.init(provider: .google, reason: "account_deleted")),
        ]
        #expect(Array(asked.suffix(2)) == revoked)
        let notice = AppleNotice(id: "n-1", kind: .accountDelete, subject: "a-1", eventTime: nil, purgeDelay: 30, cooldown: 7)
        #expect(Array(try decide(state, .handleAppleNotification(notice), now: now).suffix(2)) == revoked)
    }

    @Test("Apple's consent-revoked drops Apple's token, also when Apple stays as the only method")
    func consentRevoked() throws {
        let notice = AppleNotice(id: "n-2", kind: .consentRevoked, subject: "a-1", eventTime: nil)
        let revoked = AccountEvent.providerTokenRevoked(.init(provider: .apple, reason: "apple_consent_revoked"))
        #expect(
            try decide(account([stored(Self.apple), stored(Self.google)]), .handleAppleNotification(notice), now: now).contains(revoked))
        let appleOnly = [
            AccountEvent.registered(.init(email: nil, displayName: nil, method: "apple")),
            .providerLinked(.init(provider: .apple, subject: "a-1", email: nil, emailVerified: false)), stored(Self.apple),
        ].reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        let events = try decide(appleOnly, .handleAppleNotification(notice), now: now)
        #expect(events.contains(revoked) && !events.contains { if case .providerUnlinked = $0 { true } else { false } })
    }

    @Test("an account whose address came from the provider adds a password for it; one never verified waits for its link")
    func passwordForProviderAddress() throws {
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "t")
        func add(_ state: AccountState, _ email: String) throws -> [AccountEvent] {
            try decide(
                state,
                .addEmailAndPassword(
                    try #require(EmailAddress(email)), passwordHash: "h", link: link, sessionID: session, reauthTokenHash: "g"),
                now: now)
        }
        #expect(try add(account(), "Ana@Example.com") == [.passwordSet(.init(passwordHash: "h", reason: .add, sessionID: session))])
        let unverified = try add(account(emailVerified: false), "ana@example.com")
        #expect(unverified.map(\.type) == ["email.add_requested"])
        // Another address, or an account that has a password already: change the email instead.
        let exists = IdentityError(.emailExists, "You already have an email address. Change it instead.")
        #expect(throws: exists) { try add(account(), "bo@example.com") }
        #expect(throws: exists) { try add(account([.passwordSet(.init(passwordHash: "h0", reason: .add))]), "ana@example.com") }
        // Re-auth still comes first.
        #expect(throws: IdentityError.reauthRequired) {
            try decide(
                account(),
                .addEmailAndPassword(
                    try #require(EmailAddress("ana@example.com")), passwordHash: "h", link: link, sessionID: session,
                    reauthTokenHash: nil), now: now)
        }
    }
}
