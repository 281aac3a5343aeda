import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

/// Disabled accounts, over the in-memory repository.
@Suite("Disabled accounts, in memory")
struct DisableRulesTests {
    @Test("disabling ends every session; a sign-in with the right password is account_disabled, a wrong one still invalid_credentials")
    func disable() async throws {
        let fixture = try InMemoryAccounts()
        let email = InMemoryAccounts.newEmail()
        let first = try await fixture.signedUp(email)
        _ = try await fixture.accounts.verifyEmail(token: try await fixture.lastEmailToken())
        let second = try await fixture.signedIn(email)
        _ = try await fixture.providers.link(
            fixture.ref(first), .apple, idToken: FakeIdentityVerifier.token(.apple, subject: "apple-d"),
            reauthToken: try await fixture.passwordGrant(fixture.ref(first)))

        let disabled = try await fixture.accounts.disable(first.accountID, reason: "chargeback fraud")
        #expect(disabled.isDisabled && disabled.disabledReason == "chargeback fraud")
        #expect(disabled.sessions.values.allSatisfy { $0.revokedReason == "account_disabled" })
        for session in [first, second] {
            #expect(try await fixture.accounts.authenticate(accessToken: session.accessToken) == nil)
            await expectIdentityError(.sessionExpired) { try await fixture.accounts.refresh(session.refreshToken) }
        }
        await expectIdentityError(.accountDisabled) { try await fixture.signedIn(email) }
        // Only the right password learns that the account is disabled.
        await expectIdentityError(.invalidCredentials) {
            try await fixture.accounts.signIn(email: email, password: "copper-lantern-77", device: nil)
        }
        await expectIdentityError(.accountDisabled) {
            try await fixture.providers.signIn(
                .apple, idToken: FakeIdentityVerifier.token(.apple, subject: "apple-d"), nonce: nil, displayName: nil, device: nil)
        }
        // Disabling again changes nothing.
        let version = try await fixture.repository.load(first.accountID).version
        _ = try await fixture.accounts.disable(first.accountID, reason: "again")
        #expect(try await fixture.repository.load(first.accountID).version == version)
    }

    @Test("enabling lets sign-ins through again; the ended sessions stay ended; an unknown account is no_account")
    func enable() async throws {
        let fixture = try InMemoryAccounts()
        let email = InMemoryAccounts.newEmail()
        let session = try await fixture.signedUp(email)
        _ = try await fixture.accounts.disable(session.accountID, reason: "review")
        let enabled = try await fixture.accounts.enable(session.accountID)
        #expect(!enabled.isDisabled && enabled.disabledReason == nil)
        #expect(try await fixture.signedIn(email).accountID == session.accountID)
        #expect(try await fixture.accounts.authenticate(accessToken: session.accessToken) == nil)
        await expectIdentityError(.noAccount) { try await fixture.accounts.disable(UUID(), reason: "nobody") }
    }
}
