import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

/// Sessions ending: sign-out, refresh-token reuse, expiry, a password change, over the
/// in-memory repository.
@Suite("Session revocation, in memory")
struct SessionRevocationTests {
    @Test("signing out ends only that session")
    func signOut() async throws {
        let fixture = try InMemoryAccounts()
        let email = "sessions-\(UUID().uuidString.prefix(6))@example.com"
        let first = try await fixture.signedUp(email)
        let second = try await fixture.signedIn(email)
        try await fixture.accounts.revoke(session: fixture.ref(first), reason: "logout")
        #expect(try await fixture.accounts.authenticate(accessToken: first.accessToken) == nil)
        #expect(try await fixture.accounts.authenticate(accessToken: second.accessToken) == fixture.ref(second))
        await expectIdentityError(.sessionExpired) { try await fixture.accounts.refresh(first.refreshToken) }
    }

    @Test("a refresh replaces the pair; the spent refresh token presented again ends the session")
    func refreshReuse() async throws {
        let fixture = try InMemoryAccounts()
        let session = try await fixture.signedUp()
        let renewed = try await fixture.accounts.refresh(session.refreshToken)
        #expect(renewed.sessionID == session.sessionID && renewed.refreshToken != session.refreshToken)
        #expect(try await fixture.accounts.authenticate(accessToken: session.accessToken) == nil)
        #expect(try await fixture.accounts.authenticate(accessToken: renewed.accessToken) == fixture.ref(renewed))

        await expectIdentityError(.sessionExpired) { try await fixture.accounts.refresh(session.refreshToken) }
        #expect(try await fixture.accounts.authenticate(accessToken: renewed.accessToken) == nil)
        await expectIdentityError(.sessionExpired) { try await fixture.accounts.refresh(renewed.refreshToken) }
    }

    @Test("an access token lasts 15 minutes")
    func accessExpiry() async throws {
        let fixture = try InMemoryAccounts()
        let session = try await fixture.signedUp()
        fixture.clock.advance(by: Policies.standard.accessTokenLifetime - 1)
        #expect(try await fixture.accounts.authenticate(accessToken: session.accessToken) != nil)
        fixture.clock.advance(by: 1)
        #expect(try await fixture.accounts.authenticate(accessToken: session.accessToken) == nil)
        #expect(try await fixture.accounts.refresh(session.refreshToken).sessionID == session.sessionID)
    }

    @Test("a password change ends every other session and keeps the one that changed it")
    func passwordChange() async throws {
        let fixture = try InMemoryAccounts()
        let email = "change-\(UUID().uuidString.prefix(6))@example.com"
        let changing = try await fixture.signUp(email)
        let other = try await fixture.signedIn(email)
        try await fixture.accounts.changePassword(
            changing, newPassword: "copper-lantern-77", reauthToken: try await fixture.passwordGrant(changing))
        #expect(try await fixture.accounts.authenticate(accessToken: other.accessToken) == nil)
        let state = try await fixture.repository.load(changing.accountID)
        #expect(state.sessions[changing.sessionID]?.isActive == true)
        #expect(state.sessions[other.sessionID]?.revokedReason == "password_changed")
        await expectIdentityError(.invalidCredentials) {
            try await fixture.signedIn(email)
        }
    }
}
