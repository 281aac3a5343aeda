import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

/// Linking and disconnecting Apple and Google, over the in-memory repository.
@Suite("Providers, in memory: linking, the last-method guard, linking by email")
struct ProviderLinkTests {
    @Test("connecting a provider takes a grant of this session; an identity another account holds is provider_in_use")
    func link() async throws {
        let fixture = try InMemoryAccounts()
        let session = try await fixture.signUp(verified: true)
        let other = try await fixture.signUp(verified: true)
        let otherGrant = try await fixture.passwordGrant(other)
        let token = FakeIdentityVerifier.token(.apple, subject: "apple-1")

        await expectIdentityError(.reauthRequired) { try await fixture.providers.link(session, .apple, idToken: token, reauthToken: nil) }
        await expectIdentityError(.reauthRequired) {
            try await fixture.providers.link(session, .apple, idToken: token, reauthToken: otherGrant)
        }
        let linked = try await fixture.providers.link(
            session, .apple, idToken: token, reauthToken: try await fixture.passwordGrant(session))
        #expect(linked.providerSubjects[.apple] == "apple-1")
        #expect(try await fixture.repository.providerOwner(.apple, subject: "apple-1") == session.accountID)

        await expectIdentityError(.providerInUse) {
            try await fixture.providers.link(other, .apple, idToken: token, reauthToken: otherGrant)
        }
        #expect(try await fixture.repository.load(other.accountID).providerSubjects.isEmpty)
    }

    @Test("the only sign-in method cannot be disconnected (last_method, before re-auth); beside a password it can, with re-auth")
    func lastMethod() async throws {
        let fixture = try InMemoryAccounts()
        let (signedIn, created) = try await fixture.providers.signIn(
            .google, idToken: FakeIdentityVerifier.token(.google, subject: "google-1"), nonce: nil, displayName: nil, device: nil)
        #expect(created)
        let providerOnly = fixture.ref(signedIn)
        await expectIdentityError(.lastMethod) { try await fixture.providers.disconnect(providerOnly, .google, reauthToken: nil) }
        #expect(try await fixture.repository.load(providerOnly.accountID).providerSubjects[.google] == "google-1")

        let session = try await fixture.signUp(verified: true)
        let grant = try await fixture.passwordGrant(session)
        _ = try await fixture.providers.link(
            session, .apple, idToken: FakeIdentityVerifier.token(.apple, subject: "apple-2"), reauthToken: grant)
        await expectIdentityError(.reauthRequired) { try await fixture.providers.disconnect(session, .apple, reauthToken: nil) }
        let after = try await fixture.providers.disconnect(session, .apple, reauthToken: grant)
        #expect(after.providerSubjects[.apple] == nil)
        #expect(try await fixture.repository.providerOwner(.apple, subject: "apple-2") == nil)
        await expectIdentityError(.notLinked) { try await fixture.providers.disconnect(session, .apple, reauthToken: grant) }
    }

    @Test("a provider sign-in joins an account by email only when both verified the address and the account has no password")
    func linkByEmail() async throws {
        let fixture = try InMemoryAccounts()
        let email = "linking-\(UUID().uuidString.prefix(6))@example.com"
        let owner = try await fixture.signUp(email)
        let verifyToken = try await fixture.lastEmailToken()

        // The account never proved the address: no automatic join, and no second account either.
        do {
            _ = try await fixture.providers.signIn(
                .google, idToken: FakeIdentityVerifier.token(.google, subject: "google-a", email: email), nonce: nil, displayName: nil,
                device: nil)
            Issue.record("a provider joined, or duplicated, an account that never proved its address")
        } catch let required as LinkRequired {
            #expect(required.methods == [.password] && required.emailHint.hasSuffix("@example.com"))
            #expect(try await fixture.repository.providerOwner(.google, subject: "google-a") == nil)
        }

        _ = try await fixture.accounts.verifyEmail(token: verifyToken)
        // The provider does not vouch for it: still no link.
        let (unvouched, unvouchedCreated) = try await fixture.providers.signIn(
            .google, idToken: FakeIdentityVerifier.token(.google, subject: "google-b", email: email, verified: false), nonce: nil,
            displayName: nil, device: nil)
        #expect(unvouchedCreated && unvouched.accountID != owner.accountID)

        // Verified, but with a password (whoever set it may not be the address's owner): proven once.
        await #expect(throws: LinkRequired.self) {
            try await fixture.providers.signIn(
                .apple, idToken: FakeIdentityVerifier.token(.apple, subject: "apple-c", email: email), nonce: nil, displayName: nil,
                device: nil)
        }
        #expect(try await fixture.repository.providerOwner(.apple, subject: "apple-c") == nil)

        // An account without a password whose address Google vouched for: Apple vouching for it too joins it.
        let providerEmail = InMemoryAccounts.newEmail()
        let (googleOnly, _) = try await fixture.providers.signIn(
            .google, idToken: FakeIdentityVerifier.token(.google, subject: "google-d", email: providerEmail), nonce: nil,
            displayName: nil, device: nil)
        let (joined, joinedCreated) = try await fixture.providers.signIn(
            .apple, idToken: FakeIdentityVerifier.token(.apple, subject: "apple-d", email: providerEmail), nonce: nil,
            displayName: nil, device: nil)
        #expect(!joinedCreated && joined.accountID == googleOnly.accountID)
        #expect(try await fixture.repository.load(googleOnly.accountID).providerSubjects[.apple] == "apple-d")
    }

    @Test("the merge is judged again under the account's lock: a password set after the read makes it link_required")
    func mergeRecheckedUnderLock() async throws {
        let fixture = try InMemoryAccounts()
        let email = InMemoryAccounts.newEmail()
        let (googleOnly, _) = try await fixture.providers.signIn(
            .google, idToken: FakeIdentityVerifier.token(.google, subject: "google-r", email: email), nonce: nil, displayName: nil,
            device: nil)
        // Between the sign-in's read of the account and its link, a password comes (a reset of
        // the verified address): whoever set it may not be the provider's owner.
        let accounts = fixture.accounts
        let outbox = fixture.repository
        await fixture.repository.afterNextLoad(of: googleOnly.accountID) {
            _ = try await accounts.forgotPassword(email: email)
            let token = try #require(await outbox.outbox.last(where: { $0.template == "password_reset" })?.token)
            _ = try await accounts.resetPassword(token: token, newPassword: "copper-lantern-77")
        }
        await #expect(throws: LinkRequired.self) {
            try await fixture.providers.signIn(
                .apple, idToken: FakeIdentityVerifier.token(.apple, subject: "apple-r", email: email), nonce: nil, displayName: nil,
                device: nil)
        }
        let after = try await fixture.repository.load(googleOnly.accountID)
        #expect(after.hasPassword && after.providerSubjects[.apple] == nil)
        #expect(try await fixture.repository.providerOwner(.apple, subject: "apple-r") == nil)
    }

    @Test("a link token carries the waiting identity for 15 minutes, under our key only; the proven account gets it")
    func linkTokens() async throws {
        let fixture = try InMemoryAccounts()
        let email = InMemoryAccounts.newEmail()
        let owner = try await fixture.signedUp(email)
        let token: String
        do {
            _ = try await fixture.providers.signIn(
                .apple, idToken: FakeIdentityVerifier.token(.apple, subject: "apple-w", email: email), nonce: nil, displayName: nil,
                device: nil)
            Issue.record("no link_required")
            return
        } catch let required as LinkRequired {
            token = required.linkToken
        }
        let otherKey = ProviderLinkTokens(key: Array(repeating: 9, count: 32), lifetime: Policies.standard.providerLinkLifetime)
        #expect(throws: IdentityError.self) { try otherKey.open(token, now: fixture.clock.now()) }
        let waiting = try fixture.providers.waitingIdentity(token)
        #expect(waiting.identity.provider == .apple && waiting.identity.subject == "apple-w" && waiting.identity.email == email)
        #expect(waiting.holder == owner.accountID)
        // Another account proven with the token gets nothing: a token never moves an identity elsewhere.
        let other = try await fixture.signedUp()
        await expectIdentityError(.linkMismatch) { try await fixture.providers.link(waiting, to: other) }
        #expect(try await fixture.repository.providerOwner(.apple, subject: "apple-w") == nil)
        #expect(try await fixture.accounts.authenticate(accessToken: other.accessToken) == nil)

        fixture.clock.advance(by: Policies.standard.providerLinkLifetime)
        await expectIdentityError(.linkExpired) { try fixture.providers.waitingIdentity(token) }

        try await fixture.providers.link(waiting, to: try await fixture.signedIn(email))
        #expect(try await fixture.repository.providerOwner(.apple, subject: "apple-w") == owner.accountID)
        let (signedIn, created) = try await fixture.providers.signIn(
            .apple, idToken: FakeIdentityVerifier.token(.apple, subject: "apple-w", email: email), nonce: nil, displayName: nil,
            device: nil)
        #expect(!created && signedIn.accountID == owner.accountID)
    }
}
