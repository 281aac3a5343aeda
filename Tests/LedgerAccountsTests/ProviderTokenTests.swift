import Foundation
import LedgerAccounts
import LedgerCrypto
import LedgerIdentity
import Testing

/// Provider refresh tokens over the in-memory repository: fetched with a code, kept, and
/// revoked through the outbox sealed.
@Suite("Providers, in memory: refresh tokens kept and revoked")
struct ProviderTokenTests {
    @Test("a sign-in's code is exchanged and its token kept; a refused code signs in all the same and keeps nothing")
    func kept() async throws {
        let fixture = try InMemoryAccounts()
        let token = FakeIdentityVerifier.token(.apple, subject: "a-1")
        let (session, _) = try await fixture.providers.signIn(
            .apple, idToken: token, nonce: nil, displayName: nil, device: nil, authorizationCode: "code:a-1")
        #expect(
            try await fixture.repository.load(session.accountID).providerTokens[.apple]
                == .init(provider: .apple, subject: "a-1", clientID: FakeProviderTokens.clientID, refreshToken: "refresh:a-1"))
        // Another user's code beside this ID token is refused by the exchange: the sign-in stands.
        let (other, _) = try await fixture.providers.signIn(
            .google, idToken: FakeIdentityVerifier.token(.google, subject: "g-1"), nonce: nil, displayName: nil, device: nil,
            authorizationCode: "code:a-1")
        #expect(try await fixture.repository.load(other.accountID).providerTokens.isEmpty)
    }

    @Test("disconnecting queues the revocation sealed: only this service's key opens it, and only in its own message")
    func revocationSealed() async throws {
        let fixture = try InMemoryAccounts()
        let session = try await fixture.signUp(verified: true)
        let grant = try await fixture.passwordGrant(session)
        _ = try await fixture.providers.link(
            session, .google, idToken: FakeIdentityVerifier.token(.google, subject: "g-2"), reauthToken: grant,
            authorizationCode: "code:g-2")
        #expect(await fixture.repository.outbox.filter { $0.channel == .provider }.isEmpty)
        _ = try await fixture.providers.disconnect(session, .google, reauthToken: grant)
        let message = try #require(await fixture.repository.outbox.last { $0.channel == .provider })
        #expect(message.to == "google" && message.template == ProviderTokenRevocations.template)
        #expect(message.token?.contains("refresh:g-2") == false)
        let opened = try #require(fixture.repository.revocations.open(message))
        #expect(opened.provider == .google && opened.clientID == FakeProviderTokens.clientID && opened.refreshToken == "refresh:g-2")
        var moved = message
        moved.id = UUID()
        #expect(fixture.repository.revocations.open(moved) == nil)
        #expect(ProviderTokenRevocations(masterKey: try MasterKey.generate()).open(message) == nil)
        #expect(try await fixture.repository.load(session.accountID).providerTokens.isEmpty)
    }
}
