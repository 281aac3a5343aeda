import Foundation
import LedgerIdentity
import Testing

@Suite("decide: removing the phone or the email")
struct RemoveMethodDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let session = UUID()

    /// An account with the given events after a session and a grant ("g") of that session.
    func account(_ events: [AccountEvent]) -> AccountState {
        let setup: [AccountEvent] = [
            .sessionStarted(
                .init(
                    sessionID: session, method: "email", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
            .reauthGranted(
                .init(grantID: UUID(), sessionID: session, method: "password", tokenHash: "g", expiresAt: now.addingTimeInterval(900))),
        ]
        return (events + setup).reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
    }

    static let registered = AccountEvent.registered(.init(email: "ana@example.com", displayName: nil, method: "email"))
    static let password = AccountEvent.passwordSet(.init(passwordHash: "h0", reason: .signup))
    static let phone = AccountEvent.phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil))

    @Test("the phone goes with a grant beside another method; without one, reauth_required")
    func removePhone() throws {
        let state = account([Self.registered, Self.password, Self.phone])
        #expect(throws: IdentityError.reauthRequired) {
            try decide(state, .removePhone(sessionID: session, reauthTokenHash: nil), now: now)
        }
        // A session the account does not have (ended, or another's) is refused before the grant is looked at.
        #expect(throws: IdentityError.sessionExpired) { try decide(state, .removePhone(sessionID: UUID(), reauthTokenHash: "g"), now: now) }
        let events = try decide(state, .removePhone(sessionID: session, reauthTokenHash: "g"), now: now)
        #expect(events == [.phoneRemoved(.init(phone: "+995511200300"))])
        let after = events.reduce(state) { evolve($0, $1, at: now) }
        #expect(after.phone == nil && after.signInMethods == [.password])
        #expect(throws: IdentityError(.noPhone, "There is no phone number on this account.")) {
            try decide(after, .removePhone(sessionID: session, reauthTokenHash: "g"), now: now)
        }
    }

    @Test("the only sign-in method is last_method, grant or not: the phone, and the email with its password")
    func lastMethod() throws {
        let phoneOnly = account([.registered(.init(email: nil, displayName: nil, method: "phone")), Self.phone])
        for grant in [nil, "g"] {
            #expect(throws: IdentityError.self) {
                try decide(phoneOnly, .removePhone(sessionID: session, reauthTokenHash: grant), now: now)
            }
            do {
                _ = try decide(phoneOnly, .removePhone(sessionID: session, reauthTokenHash: grant), now: now)
            } catch let error as IdentityError {
                #expect(error.code == .lastMethod)
                #expect(error.message.hasPrefix("This is your only sign-in method."))
            }
        }
        let emailOnly = account([Self.registered, Self.password])
        for grant in [nil, "g"] {
            do {
                _ = try decide(emailOnly, .removeEmail(sessionID: session, reauthTokenHash: grant), now: now)
                Issue.record("the only method was removed")
            } catch let error as IdentityError {
                #expect(error.code == .lastMethod)
            }
        }
    }

    @Test("removing the email removes its password and its pending links; revert links stay")
    func removeEmail() throws {
        let (verify, revert) = (UUID(), UUID())
        let state = account([
            Self.registered, Self.password, Self.phone,
            .emailChanged(
                .init(
                    email: "ana@example.com", previousEmail: "old@example.com", previousEmailVerified: true, linkID: UUID(),
                    revertLinkID: revert, revertExpiresAt: now.addingTimeInterval(86_400), revertTokenHash: "x")),
            .emailVerificationSent(
                .init(email: "ana@example.com", linkID: verify, expiresAt: now.addingTimeInterval(1800), tokenHash: "v")),
        ])
        #expect(state.pendingLinks.count == 2)
        #expect(throws: IdentityError.reauthRequired) {
            try decide(state, .removeEmail(sessionID: session, reauthTokenHash: nil), now: now)
        }
        let events = try decide(state, .removeEmail(sessionID: session, reauthTokenHash: "g"), now: now)
        #expect(events.first == .emailRemoved(.init(email: "ana@example.com", passwordRemoved: true, sessionID: session)))
        let after = events.reduce(state) { evolve($0, $1, at: now) }
        #expect(after.email == nil && !after.hasPassword && after.signInMethods == [.phone])
        #expect(after.pendingLinks.keys.sorted { $0.uuidString < $1.uuidString } == [revert])
    }
}
