import Foundation
import LedgerIdentity
import Testing

@Suite("decide: email accounts and sessions")
struct DecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let accountID = UUID()

    func tokens(_ tag: String, ttl: TimeInterval = 3600) -> AccountCommand.SessionTokens {
        .init(
            accessTokenHash: "a-\(tag)", refreshTokenHash: "r-\(tag)",
            accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(ttl))
    }

    func registered(session: UUID = UUID(), link: UUID = UUID()) throws -> AccountState {
        let command = AccountCommand.register(
            .init(
                email: EmailAddress("Ana@Example.com")!, passwordHash: "h0", displayName: "Ana", handle: Handle("user_000042")!,
                handleIsTemporary: true,
                session: .init(sessionID: session, method: "email", device: "ios", tokens: tokens("1")),
                verificationLink: .init(linkID: link, expiresAt: now.addingTimeInterval(1800))))
        return apply(AccountState(accountID: accountID), try decide(AccountState(accountID: accountID), command, now: now))
    }

    func apply(_ state: AccountState, _ events: [AccountEvent], at time: Date? = nil) -> AccountState {
        events.reduce(state) { evolve($0, $1, at: time ?? now) }
    }

    @Test("registration emits the account, password, handle, verification link and first session")
    func registration() throws {
        let state = try registered()
        #expect(state.exists && state.hasPassword && !state.emailVerified)
        #expect(state.email == "Ana@Example.com")
        #expect(state.handle == "user_000042" && state.handleIsTemporary)
        #expect(state.sessions.count == 1)
        #expect(state.pendingLinks.count == 1)
        #expect(throws: IdentityError.self) {
            try decide(
                state,
                .register(
                    .init(
                        email: EmailAddress("x@y.co")!, passwordHash: "h", displayName: nil, handle: Handle("abc")!,
                        handleIsTemporary: false, session: .init(sessionID: UUID(), method: "email", device: nil, tokens: tokens("2")),
                        verificationLink: .init(linkID: UUID(), expiresAt: now))), now: now)
        }
    }

    @Test("a device label longer than 200 characters is cut to 200 before it reaches an event")
    func longDeviceLabel() throws {
        let label = String(repeating: "Mozilla/5.0 ", count: 1000)
        let state = try registered()
        let events = try decide(
            state,
            .startSession(
                .init(sessionID: UUID(), method: "email", device: label, tokens: tokens("9")),
                proof: .password(hash: "h0", email: "ana@example.com")), now: now)
        guard case .sessionStarted(let started) = events.first else {
            Issue.record("no session started: \(events)")
            return
        }
        #expect(started.device == String(label.prefix(200)))
        #expect(AccountCommand.NewSession(sessionID: UUID(), method: "email", device: "ios", tokens: tokens("8")).device == "ios")
    }

    @Test("refresh rotates the pair; presenting the spent token again revokes the session")
    func refreshRotationAndReuse() throws {
        let session = UUID()
        var state = try registered(session: session)
        let rotated = try decide(
            state, .refreshSession(sessionID: session, presentedRefreshHash: "r-1", replacement: tokens("2")), now: now)
        #expect(rotated.count == 1)
        state = apply(state, rotated)
        #expect(state.sessions[session]?.refreshTokenHash == "r-2")
        state = apply(
            state, try decide(state, .refreshSession(sessionID: session, presentedRefreshHash: "r-2", replacement: tokens("3")), now: now))

        // Two rotations back is as spent as one: the token index found it under this session.
        let reuse = try decide(state, .refreshSession(sessionID: session, presentedRefreshHash: "r-1", replacement: tokens("4")), now: now)
        #expect(reuse == [.sessionRevoked(.init(sessionID: session, reason: "refresh_token_reused"))])
        state = apply(state, reuse)
        #expect(throws: IdentityError.sessionExpired(lastMethod: "email")) {
            try decide(state, .refreshSession(sessionID: session, presentedRefreshHash: "r-3", replacement: tokens("5")), now: now)
        }
    }

    @Test("an expired or unknown refresh token is session_expired, with the session's sign-in method when it names one")
    func refreshExpiry() throws {
        let session = UUID()
        let state = try registered(session: session)
        let later = now.addingTimeInterval(3601)
        // The token named a session: its sign-in method comes back, for the app's sign-in screen.
        #expect(throws: IdentityError.sessionExpired(lastMethod: "email")) {
            try decide(state, .refreshSession(sessionID: session, presentedRefreshHash: "r-1", replacement: tokens("2")), now: later)
        }
        #expect(throws: IdentityError.sessionExpired) {
            try decide(state, .refreshSession(sessionID: UUID(), presentedRefreshHash: "r-1", replacement: tokens("2")), now: now)
        }
    }

    @Test("verification links are one-shot and expire after their TTL")
    func verificationLinks() throws {
        let link = UUID()
        let state = try registered(link: link)
        #expect(throws: IdentityError.linkExpired) {
            try decide(state, .confirmVerificationLink(linkID: link), now: now.addingTimeInterval(1800))
        }
        let verified = try decide(state, .confirmVerificationLink(linkID: link), now: now.addingTimeInterval(1799))
        let after = apply(state, verified)
        #expect(after.emailVerified)
        #expect(throws: IdentityError.linkExpired) { try decide(after, .confirmVerificationLink(linkID: link), now: now) }
        #expect(try decide(after, .sendVerificationLink(.init(linkID: UUID(), expiresAt: now)), now: now).isEmpty)
    }

    @Test("a password reset revokes every session and spends its link")
    func passwordReset() throws {
        var state = try registered()
        state = apply(
            state,
            try decide(
                state,
                .startSession(
                    .init(sessionID: UUID(), method: "email", device: nil, tokens: tokens("b")),
                    proof: .password(hash: "h0", email: "ana@example.com")), now: now))
        let link = UUID()
        state = apply(
            state, try decide(state, .sendPasswordResetLink(.init(linkID: link, expiresAt: now.addingTimeInterval(1800))), now: now))
        let reset = try decide(state, .resetPassword(linkID: link, newPasswordHash: "h1"), now: now.addingTimeInterval(60))
        // The address proven (it never was), the new password, both sessions ended, and the
        // pending verification link with them.
        #expect(reset.map(\.type) == ["email.verified", "password.set", "session.revoked", "session.revoked", "email.links_revoked"])
        state = apply(state, reset, at: now.addingTimeInterval(60))
        #expect(state.passwordHash == "h1")
        #expect(state.passwordChangedAt == now.addingTimeInterval(60))
        #expect(state.sessions.values.allSatisfy { !$0.isActive })
        #expect(throws: IdentityError.linkExpired) { try decide(state, .resetPassword(linkID: link, newPasswordHash: "h2"), now: now) }
        #expect(throws: IdentityError.self) {
            try decide(AccountState(accountID: UUID()), .sendPasswordResetLink(.init(linkID: UUID(), expiresAt: now)), now: now)
        }
    }

    @Test("a rehash keeps the password's change time; profile updates emit only what changed")
    func rehashAndProfile() throws {
        var state = try registered()
        state = apply(
            state, try decide(state, .rehashPassword(replacing: state.passwordHash ?? "", newPasswordHash: "h-new"), now: now),
            at: now.addingTimeInterval(5))
        #expect(state.passwordHash == "h-new")
        #expect(state.passwordChangedAt == now)
        #expect(try decide(state, .updateProfile(displayName: "Ana", handle: nil), now: now).isEmpty)
        let renamed = try decide(state, .updateProfile(displayName: .some(nil), handle: Handle("Ana_K")), now: now)
        state = apply(state, renamed)
        #expect(state.displayName == nil)
        #expect(state.handle == "Ana_K" && !state.handleIsTemporary)
    }
}
