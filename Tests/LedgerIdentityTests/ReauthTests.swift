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
        if password { state = evolve(state, .passwordSet(.init(passwordHash: "h", reason: "signup")), at: now) }
        if phone { state = evolve(state, .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)), at: now) }
        state = evolve(state, .sessionStarted(.init(
            sessionID: session, method: "email", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
            accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))), at: now)
        return state
    }

    func granted(_ state: AccountState, session: UUID? = nil, token: String = "t1") throws -> AccountState {
        let events = try decide(
            state, .grantReauth(sessionID: session ?? self.session, .init(grantID: UUID(), method: .password, tokenHash: token, lifetime: 900)),
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
        let emailOnly = account(email: true, password: true, phone: false)
        #expect(emailOnly.reauthOptions(for: .changePassword) == .init(methods: [.emailLink], lastMethod: true))
        #expect(emailOnly.reauthOptions(for: .changeEmail) == .init(methods: [.password], lastMethod: true))
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
            phoneOnly, .changePhone(PhoneNumber(e164: "+995511100000", region: "GE"), requestID: nil, sessionID: session, reauthTokenHash: nil),
            now: now)
        #expect(events == [.phoneChanged(.init(phone: "+995511100000", region: "GE", previousPhone: "+995511200300", requestID: nil))])
        #expect(throws: IdentityError.reauthRequired) {
            try phoneOnly.requireReauth(.deleteAccount, sessionID: session, tokenHash: nil, now: now)
        }
        let both = account(email: true, password: true, phone: true)
        #expect(throws: IdentityError.reauthRequired) {
            try decide(
                both, .changePhone(PhoneNumber(e164: "+995511100000", region: "GE"), requestID: nil, sessionID: session, reauthTokenHash: nil),
                now: now)
        }
    }

    @Test("add phone only without one; phone registration claims the number and starts a session")
    func phoneCommands() throws {
        let withPhone = account(email: true, password: true, phone: true)
        #expect(throws: IdentityError.self) {
            try decide(withPhone, .linkPhone(PhoneNumber(e164: "+995511100000", region: "GE"), requestID: nil), now: now)
        }
        let fresh = AccountState(accountID: UUID())
        let events = try decide(fresh, .registerByPhone(.init(
            phone: PhoneNumber(e164: "+995511100000", region: "GE"), requestID: nil, handle: Handle("user_123456")!,
            session: .init(sessionID: session, method: "phone", device: nil, tokens: .init(
                accessTokenHash: "a", refreshTokenHash: "r", accessExpiresAt: now, refreshExpiresAt: now)))), now: now)
        let state = events.reduce(fresh) { evolve($0, $1, at: now) }
        #expect(state.exists && state.phone == "+995511100000" && state.email == nil && state.signInMethods == [.phone])
        #expect(state.sessions[session]?.method == "phone")
    }
}
