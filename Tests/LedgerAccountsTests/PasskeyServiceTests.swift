import Foundation
import LedgerAccounts
import LedgerCore
import LedgerIdentity
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

/// Passkeys without a database: the service over the in-memory repository and spent challenges,
/// a software authenticator answering its options.
@Suite("Passkeys in memory: registration, sign-in, one answer per challenge, the counter")
struct PasskeyServiceTests {
    static let origin = "http://localhost:8080"

    /// A verified account with a passkey of `authenticator`: its session and the credential.
    func withPasskey(_ world: InMemoryAccounts, _ authenticator: SoftAuthenticator, signCount: UInt32 = 0) async throws
        -> (SessionRef, SoftCredential)
    {
        let session = try await world.signUp(verified: true)
        await #expect(throws: IdentityError.reauthRequired) { try await world.passkeys.registrationOptions(session, reauthToken: nil) }
        let grant = try await world.passwordGrant(session)
        let options = try await world.passkeys.registrationOptions(session, reauthToken: grant)
        let made = authenticator.makeCredential(
            rpID: "localhost", origin: Self.origin, challenge: options.challenge, userHandle: options.userHandle, signCount: signCount)
        let passkey = try await world.passkeys.register(session, reauthToken: grant, credential: made.response, name: nil)
        #expect(passkey.name == "Passkey")
        return (session, made.credential)
    }

    @Test("a registered passkey signs in once per challenge; the same answer again is invalid_credential")
    func signInOnce() async throws {
        let world = try InMemoryAccounts()
        let authenticator = SoftAuthenticator()
        let (session, credential) = try await withPasskey(world, authenticator)
        let options = try world.passkeys.signInOptions()
        #expect(options.allowCredentials.isEmpty)
        let answer = authenticator.getAssertion(credential: credential, challenge: options.challenge)
        let signedIn = try await world.passkeys.signIn(credential: answer, device: "test", client: "198.18.0.1")
        #expect(signedIn.accountID == session.accountID)
        await #expect(throws: IdentityError.invalidCredential) {
            try await world.passkeys.signIn(credential: answer, device: "test", client: "198.18.0.1")
        }
    }

    @Test("a counter that does not grow is refused and recorded as passkey.suspect, with the owner told")
    func suspect() async throws {
        let world = try InMemoryAccounts()
        let authenticator = SoftAuthenticator()
        let (session, credential) = try await withPasskey(world, authenticator, signCount: 10)
        let answer = authenticator.getAssertion(
            credential: credential, challenge: try world.passkeys.signInOptions().challenge, signCount: 10)
        await #expect(throws: IdentityError.invalidCredential) {
            try await world.passkeys.signIn(credential: answer, device: "test", client: nil)
        }
        let history = try await world.repository.history(session.accountID)
        #expect(history.contains { $0.type == "passkey.suspect" })
        #expect(await world.repository.outbox.contains { $0.template == ImpliedMessages.passkeySuspectTemplate })
    }

    @Test("a re-auth challenge belongs to its session: another session's answer to it is refused, and does not spend it")
    func reauthBoundToSession() async throws {
        let world = try InMemoryAccounts()
        let authenticator = SoftAuthenticator()
        let (session, credential) = try await withPasskey(world, authenticator)
        let options = try await world.passkeys.reauthOptions(session)
        let answer = authenticator.getAssertion(credential: credential, challenge: options.challenge)
        let other = SessionRef(accountID: session.accountID, sessionID: UUID())
        await #expect(throws: IdentityError.invalidCredential) { try await world.passkeys.reauth(other, credential: answer, client: nil) }
        let grant = try await world.passkeys.reauth(session, credential: answer, client: nil)
        #expect(grant.token.hasPrefix("lg_"))
    }
}
