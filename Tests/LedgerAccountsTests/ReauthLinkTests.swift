import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

/// "Verify it's you" by an emailed link, over the in-memory repository.
@Suite("Re-auth links, in memory")
struct ReauthLinkTests {
    @Test("a re-auth link grants the session that asked, once; the grant serves that session only, for 15 minutes")
    func emailLink() async throws {
        let fixture = try InMemoryAccounts()
        let email = "reauth-\(UUID().uuidString.prefix(6))@example.com"
        let session = try await fixture.signUp(email)
        let other = try await fixture.signIn(email)

        try await fixture.reauth.sendEmailLink(session)
        let message = try #require(await fixture.repository.outbox.last)
        #expect(message.template == "reauth_link" && message.to == email)
        let token = try #require(message.token)
        let grant = try await fixture.reauth.confirmEmailLink(token: token)

        try await fixture.reauth.require(.changePassword, session: session, reauthToken: grant.token)
        await expectIdentityError(.reauthRequired) {
            try await fixture.reauth.require(.changePassword, session: other, reauthToken: grant.token)
        }
        await expectIdentityError(.linkExpired) { try await fixture.reauth.confirmEmailLink(token: token) }

        fixture.clock.advance(by: Policies.standard.reauthGrantLifetime - 1)
        try await fixture.reauth.require(.changePassword, session: session, reauthToken: grant.token)
        fixture.clock.advance(by: 1)
        await expectIdentityError(.reauthRequired) {
            try await fixture.reauth.require(.changePassword, session: session, reauthToken: grant.token)
        }
    }

    @Test("a re-auth link lasts 30 minutes")
    func linkExpiry() async throws {
        let fixture = try InMemoryAccounts()
        let session = try await fixture.signUp()
        try await fixture.reauth.sendEmailLink(session)
        let lateToken = try await fixture.lastEmailToken()
        fixture.clock.advance(by: Policies.standard.emailLinkLifetime)
        await expectIdentityError(.linkExpired) { try await fixture.reauth.confirmEmailLink(token: lateToken) }

        fixture.clock.advance(by: 60)
        try await fixture.reauth.sendEmailLink(session)
        let token = try await fixture.lastEmailToken()
        fixture.clock.advance(by: Policies.standard.emailLinkLifetime - 1)
        let grant = try await fixture.reauth.confirmEmailLink(token: token)
        try await fixture.reauth.require(.deleteAccount, session: session, reauthToken: grant.token)
    }
}
