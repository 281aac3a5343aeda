import Foundation
import LedgerIdentity
import Testing

@Suite("Re-auth: options, grants and the shared guard")
struct ReauthTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let session = UUID()

    func account(email: Bool, password: Bool, phone: Bool) -> AccountState {
        var state = AccountState(accountID: UUID())
        state = evolve(state, .registered(.init(email: email ? "ana@example.com" : nil, displayName: nil, method: "email")), at: now)
        if password { state = evolve(state, .passwordSet(.init(passwordHash: "h", reason: .signup)), at: now) }
        if phone { state = evolve(state, .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)), at: now) }
        state = evolve(
            state,
            .sessionStarted(
                .init(
                    sessionID: session, method: "email", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))), at: now)
        return state
    }

    func granted(_ state: AccountState, session: UUID? = nil, token: String = "t1") throws -> AccountState {
        let events = try decide(
            state,
            .grantReauth(sessionID: session ?? self.session, .init(grantID: UUID(), method: .password, tokenHash: token, lifetime: 900)),
            now: now)
        return events.reduce(state) { evolve($0, $1, at: now) }
    }

    @Test("options leave out the method being changed; last_method when the target is the only method")
    func options() {
        let full = account(email: true, password: true, phone: true)
        #expect(full.reauthOptions(for: .changePhone) == .init(methods: [.password, .emailLink], lastMethod: false))
        #expect(full.reauthOptions(for: .changeEmail) == .init(methods: [.password, .phone], lastMethod: false))
        #expect(full.reauthOptions(for: .changePassword) == .init(methods: [.phone, .emailLink], lastMethod: false))
        #expect(full.reauthOptions(for: .deleteAccount) == .init(methods: [.password, .phone, .emailLink], lastMethod: false))
        let phoneOnly = account(email: false, password: false, phone: true)
        #expect(phoneOnly.reauthOptions(for: .changePhone) == .init(methods: [], lastMethod: true))
        #expect(phoneOnly.reauthOptions(for: .deleteAccount) == .init(methods: [.phone], lastMethod: false))
        // Email + password is one method: its password change offers the email link and its
        // email change the password, so neither is a "last method" the session alone may change.
        let emailOnly = account(email: true, password: true, phone: false)
        #expect(emailOnly.reauthOptions(for: .changePassword) == .init(methods: [.emailLink], lastMethod: false))
        #expect(emailOnly.reauthOptions(for: .changeEmail) == .init(methods: [.password], lastMethod: false))
        // Adding a method: every method the account has; not the password of an unverified email.
        #expect(full.reauthOptions(for: .addMethod) == .init(methods: [.phone, .emailLink], lastMethod: false))
        let verified = evolve(full, .emailVerified(.init(email: "ana@example.com")), at: now)
        #expect(verified.reauthOptions(for: .addMethod) == .init(methods: [.password, .phone, .emailLink], lastMethod: false))
        #expect(phoneOnly.reauthOptions(for: .addMethod) == .init(methods: [.phone], lastMethod: false))
    }

    @Test("removing the email offers neither its password nor its link; Android offers no Apple; passkeys are managed with any")
    func removalsAndPlatforms() {
        var full = account(email: true, password: true, phone: true)
        #expect(full.reauthOptions(for: .removeEmail) == .init(methods: [.phone], lastMethod: false))
        #expect(full.reauthOptions(for: .removePhone) == .init(methods: [.password, .emailLink], lastMethod: false))
        full = evolve(full, .providerLinked(.init(provider: .apple, subject: "apple-1", email: nil, emailVerified: false)), at: now)
        #expect(full.reauthOptions(for: .deleteAccount, platform: .ios).methods == [.password, .phone, .emailLink, .apple])
        #expect(full.reauthOptions(for: .deleteAccount, platform: .web).methods == [.password, .phone, .emailLink, .apple])
        #expect(full.reauthOptions(for: .deleteAccount, platform: .android).methods == [.password, .phone, .emailLink])
        #expect(full.reauthOptions(for: .removeEmail, platform: .android) == .init(methods: [.phone], lastMethod: false))
        #expect(full.reauthOptions(for: .managePasskeys).methods == [.password, .phone, .emailLink, .apple])
    }

    @Test("a stolen session alone changes neither the email nor the password of an email + password account")
    func stolenSessionOnEmailAccount() throws {
        let emailOnly = account(email: true, password: true, phone: false)
        for action in [ReauthAction.changePassword, .changeEmail, .addMethod, .deleteAccount] {
            #expect(throws: IdentityError.reauthRequired, "\(action)") {
                try emailOnly.requireReauth(action, sessionID: session, tokenHash: nil, now: now)
            }
        }
        #expect(throws: IdentityError.reauthRequired) {
            try decide(emailOnly, .changePassword(newPasswordHash: "h2", sessionID: session, reauthTokenHash: nil), now: now)
        }
        #expect(throws: IdentityError.reauthRequired) {
            try decide(
                emailOnly,
                .requestEmailChange(
                    EmailAddress("eve@example.com")!, link: .init(linkID: UUID(), expiresAt: now.addingTimeInterval(1800)),
                    sessionID: session, reauthTokenHash: nil),
                now: now)
        }
    }

    @Test("adding a method needs a grant; a password grant of an unverified email is not one, an email-link grant verifies the email")
    func addMethod() throws {
        let phone = PhoneNumber(e164: "+995511100000", region: "GE")
        let emailOnly = account(email: true, password: true, phone: false)
        #expect(throws: IdentityError.reauthRequired) {
            try decide(emailOnly, .linkPhone(phone, requestID: nil, sessionID: session, reauthTokenHash: nil), now: now)
        }
        let claim = AccountCommand.ProviderIdentityClaim(provider: .google, subject: "g-1", email: nil, emailVerified: false)
        #expect(throws: IdentityError.reauthRequired) {
            try decide(emailOnly, .linkProvider(claim, sessionID: session, reauthTokenHash: nil), now: now)
        }
        // The sign-in merge (no session) is not a signed-in add.
        #expect(try decide(emailOnly, .linkProvider(claim, sessionID: nil, reauthTokenHash: nil), now: now).count == 1)
        // A password grant while the email is unverified: accepted elsewhere, not for adding a method.
        let byPassword = try granted(emailOnly)
        try byPassword.requireReauth(.changeEmail, sessionID: session, tokenHash: "t1", now: now)
        #expect(throws: IdentityError.reauthRequired) {
            try decide(byPassword, .linkPhone(phone, requestID: nil, sessionID: session, reauthTokenHash: "t1"), now: now)
        }
        // An email-link grant proves the address: the email is verified, and the grant adds.
        let linkID = UUID()
        let linked = evolve(
            emailOnly,
            .reauthLinkSent(
                .init(
                    email: "ana@example.com", linkID: linkID, expiresAt: now.addingTimeInterval(1800), sessionID: session)), at: now)
        let events = try decide(
            linked, .confirmReauthLink(linkID: linkID, .init(grantID: UUID(), method: .emailLink, tokenHash: "t2", lifetime: 900)), now: now
        )
        #expect(events.first == .emailVerified(.init(email: "ana@example.com", via: "reauth_link")))
        let byLink = events.reduce(linked) { evolve($0, $1, at: now) }
        #expect(byLink.emailVerified)
        #expect(try decide(byLink, .linkPhone(phone, requestID: nil, sessionID: session, reauthTokenHash: "t2"), now: now).count == 1)
        // Now verified, the password grant adds too.
        #expect(
            try decide(
                try granted(byLink, token: "t3"), .linkPhone(phone, requestID: nil, sessionID: session, reauthTokenHash: "t3"), now: now
            ).count == 1)
    }

    @Test("provider re-auth: a live nonce of this session, used once; another session's, an expired one or none is invalid_token")
    func nonce() throws {
        let state = account(email: true, password: true, phone: false)
        let nonceID = UUID()
        let issued = try decide(
            state, .issueReauthNonce(sessionID: session, .init(nonceID: nonceID, nonceHash: "n1", lifetime: 300)), now: now)
        #expect(
            issued == [
                .reauthNonceIssued(.init(nonceID: nonceID, sessionID: session, nonceHash: "n1", expiresAt: now.addingTimeInterval(300)))
            ])
        let withNonce = issued.reduce(state) { evolve($0, $1, at: now) }
        let grant = AccountCommand.NewGrant(grantID: UUID(), method: .google, tokenHash: "g1", lifetime: 900)
        for presented in [["other"], []] {
            #expect(throws: IdentityError.invalidToken) {
                try decide(withNonce, .grantReauth(sessionID: session, grant, presentedNonceHashes: presented), now: now)
            }
        }
        #expect(throws: IdentityError.invalidToken) {
            try decide(withNonce, .grantReauth(sessionID: session, grant, presentedNonceHashes: ["n1"]), now: now.addingTimeInterval(300))
        }
        let events = try decide(
            withNonce, .grantReauth(sessionID: session, grant, presentedNonceHashes: ["x", "n1"]), now: now.addingTimeInterval(299))
        guard case .reauthGranted(let granted)? = events.first else {
            Issue.record("no grant")
            return
        }
        #expect(granted.nonceID == nonceID)
        let used = events.reduce(withNonce) { evolve($0, $1, at: now) }
        #expect(throws: IdentityError.invalidToken) {
            try decide(used, .grantReauth(sessionID: session, grant, presentedNonceHashes: ["n1"]), now: now)
        }
        // A nonce handed to one session is no use on another.
        let otherSession = UUID()
        let two = evolve(
            withNonce,
            .sessionStarted(
                .init(
                    sessionID: otherSession, method: "email", device: nil, accessTokenHash: "a2", refreshTokenHash: "r2",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))), at: now)
        #expect(throws: IdentityError.invalidToken) {
            try decide(two, .grantReauth(sessionID: otherSession, grant, presentedNonceHashes: ["n1"]), now: now)
        }
        // At most `Policies.reauthNonceLimit` live at once: then 429 until the oldest expires.
        var full = state
        for index in 0..<Policies.standard.reauthNonceLimit {
            full = try decide(
                full, .issueReauthNonce(sessionID: session, .init(nonceID: UUID(), nonceHash: "n\(index)", lifetime: 300)), now: now
            )
            .reduce(full) { evolve($0, $1, at: now) }
        }
        #expect(throws: IdentityError.self) {
            try decide(full, .issueReauthNonce(sessionID: session, .init(nonceID: UUID(), nonceHash: "x", lifetime: 300)), now: now)
        }
        #expect(
            try decide(
                full, .issueReauthNonce(sessionID: session, .init(nonceID: UUID(), nonceHash: "x", lifetime: 300)),
                now: now.addingTimeInterval(300)
            ).count == 1)
    }

    @Test("a grant lasts 15 minutes: accepted at 14:59, refused at 15:00 and 15:01")
    func window() throws {
        let state = try granted(account(email: true, password: true, phone: true))
        try state.requireReauth(.changePhone, sessionID: session, tokenHash: "t1", now: now.addingTimeInterval(899))
        for late in [900.0, 901] {
            #expect(throws: IdentityError.reauthRequired) {
                try state.requireReauth(.changePhone, sessionID: session, tokenHash: "t1", now: now.addingTimeInterval(late))
            }
        }
        #expect(throws: IdentityError.reauthRequired) {
            try state.requireReauth(.deleteAccount, sessionID: session, tokenHash: nil, now: now)
        }
        #expect(throws: IdentityError.reauthRequired) {
            try state.requireReauth(.deleteAccount, sessionID: session, tokenHash: "t2", now: now)
        }
    }

    @Test("a grant from one session is refused on another")
    func otherSession() throws {
        let state = try granted(account(email: true, password: true, phone: true))
        #expect(throws: IdentityError.reauthRequired) {
            try state.requireReauth(.changePhone, sessionID: UUID(), tokenHash: "t1", now: now)
        }
        #expect(throws: IdentityError.sessionExpired) { try granted(state, session: UUID()) }
    }

    @Test("changing the only method needs no grant; disconnecting or deleting always does")
    func lastMethodException() throws {
        let phoneOnly = account(email: false, password: false, phone: true)
        try phoneOnly.requireReauth(.changePhone, sessionID: session, tokenHash: nil, now: now)
        let events = try decide(
            phoneOnly,
            .changePhone(PhoneNumber(e164: "+995511100000", region: "GE"), requestID: nil, sessionID: session, reauthTokenHash: nil),
            now: now)
        #expect(
            events == [
                .phoneChanged(
                    .init(phone: "+995511100000", region: "GE", previousPhone: "+995511200300", requestID: nil, sessionID: session))
            ])
        #expect(throws: IdentityError.reauthRequired) {
            try phoneOnly.requireReauth(.deleteAccount, sessionID: session, tokenHash: nil, now: now)
        }
        let both = account(email: true, password: true, phone: true)
        #expect(throws: IdentityError.reauthRequired) {
            try decide(
                both,
                .changePhone(PhoneNumber(e164: "+995511100000", region: "GE"), requestID: nil, sessionID: session, reauthTokenHash: nil),
                now: now)
        }
    }

    @Test("add phone only without one; phone registration claims the number and starts a session")
    func phoneCommands() throws {
        let withPhone = account(email: true, password: true, phone: true)
        #expect(throws: IdentityError.self) {
            try decide(
                withPhone,
                .linkPhone(PhoneNumber(e164: "+995511100000", region: "GE"), requestID: nil, sessionID: session, reauthTokenHash: nil),
                now: now)
        }
        let fresh = AccountState(accountID: UUID())
        let events = try decide(
            fresh,
            .registerByPhone(
                .init(
                    phone: PhoneNumber(e164: "+995511100000", region: "GE"), requestID: nil, handle: Handle("user_123456")!,
                    session: .init(
                        sessionID: session, method: "phone", device: nil,
                        tokens: .init(
                            accessTokenHash: "a", refreshTokenHash: "r", accessExpiresAt: now, refreshExpiresAt: now)))), now: now)
        let state = events.reduce(fresh) { evolve($0, $1, at: now) }
        #expect(state.exists && state.phone == "+995511100000" && state.email == nil && state.signInMethods == [.phone])
        #expect(state.sessions[session]?.method == "phone")
    }
}
