import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerTestSupport
import LedgerWebAuthn
import LedgerWebAuthnTesting
import Testing

/// The console's staff (docs/support.md "The console"): an invitation registers a passkey, the
/// passkey alone signs in, the session lives 8 hours, removal ends it at once.
@Suite("Staff: invitations, passkey sign-in, sessions")
struct StaffConsoleTests {
    static let origin = "https://support.321.fit"
    let clock = ManualClock(Date(timeIntervalSince1970: 1_790_000_000))

    func console() throws -> (StaffConsole, InMemoryStaffRepository) {
        let staff = InMemoryStaffRepository(clock: clock)
        let accounts = try InMemoryAccountRepository(clock: clock)
        let console = StaffConsole(
            staff: staff, environment: try .testing(accounts, clock: clock), origin: Self.origin, relyingPartyName: "321Fit support",
            masterKey: try MasterKey.generate(), spent: InMemorySpentChallenges())
        return (console, staff)
    }

    /// The invitation's token, as its email's link carries it.
    func invitationToken(_ staff: InMemoryStaffRepository) async throws -> String {
        let message = try #require(await staff.outbox.last)
        #expect(
            message.template == StaffConsole.invitationTemplate
                && message.link?.hasPrefix(Self.origin + "/console/invitation?token=") == true)
        return try #require(message.token)
    }

    /// Invites `email`, registers a passkey from its link: the authenticator's credential.
    func enrolled(
        _ console: StaffConsole, _ staff: InMemoryStaffRepository, _ authenticator: SoftAuthenticator, email: String = "nino@321.fit",
        role: StaffRole = .admin
    )
        async throws -> SoftCredential
    {
        _ = try await console.invite(email: email, role: role)
        let token = try await invitationToken(staff)
        let options = try await console.registrationOptions(token: token)
        let made = authenticator.makeCredential(
            rpID: "support.321.fit", origin: Self.origin, challenge: options.challenge, userHandle: options.userHandle)
        let registered = try await console.register(token: token, credential: made.response)
        #expect(registered.passkeys.count == 1 && registered.invitation == nil)
        return made.credential
    }

    func signIn(_ console: StaffConsole, _ authenticator: SoftAuthenticator, _ credential: SoftCredential, origin: String? = nil)
        async throws -> (token: String, session: StaffConsole.StaffSession)
    {
        let options = try console.signInOptions()
        #expect(options.allowCredentials.isEmpty)
        let assertion = authenticator.getAssertion(credential: credential, challenge: options.challenge, origin: origin)
        return try await console.signIn(credential: assertion, client: "203.0.113.9")
    }

    @Test("an invitation registers one passkey, once; the passkey signs in for 8 hours; sign-out ends the session")
    func enrolAndSignIn() async throws {
        let (console, staff) = try console()
        let authenticator = SoftAuthenticator()
        let credential = try await enrolled(console, staff, authenticator)
        let token = try #require(await staff.outbox.last?.token)
        // The invitation is used up.
        await #expect(throws: StaffError.invitationExpired) { _ = try await console.registrationOptions(token: token) }

        let (cookie, session) = try await signIn(console, authenticator, credential)
        #expect(session.email == "nino@321.fit" && session.role == .admin && session.actor.staffID == session.staffID)
        #expect(try await console.authenticate(token: cookie) == session)
        #expect(console.checksCSRF(session.csrfToken, of: session) && !console.checksCSRF("forged", of: session))
        #expect(!console.checksCSRF(nil, of: session))
        clock.advance(by: StaffConsole.sessionLifetime - 1)
        #expect(try await console.authenticate(token: cookie) != nil)
        clock.advance(by: 1)
        #expect(try await console.authenticate(token: cookie) == nil, "8 hours, no more")

        let (second, secondSession) = try await signIn(console, authenticator, credential)
        try await console.signOut(secondSession)
        #expect(try await console.authenticate(token: second) == nil)
        #expect(try await console.authenticate(token: "") == nil)
    }

    @Test("each session has its own form token: one session's does not pass for another's")
    func csrfPerSession() async throws {
        let (console, staff) = try console()
        let authenticator = SoftAuthenticator()
        let credential = try await enrolled(console, staff, authenticator)
        let (_, first) = try await signIn(console, authenticator, credential)
        let (_, second) = try await signIn(console, authenticator, credential)
        #expect(first.csrfToken != second.csrfToken)
        #expect(!console.checksCSRF(first.csrfToken, of: second))
    }

    @Test("refused: an expired invitation, a replayed or foreign assertion, another origin, a removed staff member")
    func refusals() async throws {
        let (console, staff) = try console()
        let authenticator = SoftAuthenticator()
        _ = try await console.invite(email: "lasha@321.fit", role: .support)
        let late = try await invitationToken(staff)
        clock.advance(by: StaffConsole.invitationLifetime)
        await #expect(throws: StaffError.invitationExpired) { _ = try await console.registrationOptions(token: late) }
        await #expect(throws: StaffError.invitationExpired) { _ = try await console.invitation(token: "made-up") }

        let credential = try await enrolled(console, staff, authenticator, email: "nino@321.fit")
        // An assertion answered once is spent.
        let options = try console.signInOptions()
        let assertion = authenticator.getAssertion(credential: credential, challenge: options.challenge)
        _ = try await console.signIn(credential: assertion, client: nil)
        await #expect(throws: StaffError.invalidCredential) { _ = try await console.signIn(credential: assertion, client: nil) }
        // A phishing page's origin.
        await #expect(throws: StaffError.invalidCredential) {
            _ = try await signIn(console, authenticator, credential, origin: "https://support.321.fit.evil.example")
        }
        // An end user's passkey for the apps (another RP) is nobody here.
        let stranger = authenticator.makeCredential(
            rpID: "321.fit", origin: "https://321.fit", challenge: options.challenge, userHandle: [1, 2, 3]
        ).credential
        await #expect(throws: StaffError.invalidCredential) { _ = try await signIn(console, authenticator, stranger) }

        let (cookie, _) = try await signIn(console, authenticator, credential)
        let removed = try #require(try await console.remove(email: "NINO@321.fit"))
        #expect(removed.isRemoved && removed.sessions.values.allSatisfy { $0.endedAt != nil })
        #expect(try await console.authenticate(token: cookie) == nil, "removal ends the session at once")
        await #expect(throws: StaffError.invalidCredential) { _ = try await signIn(console, authenticator, credential) }
        #expect(try await console.remove(email: "nobody@321.fit") == nil)
    }

    @Test("an admin action's confirmation: this session's challenge, this staff member's passkey")
    func confirmation() async throws {
        let (console, staff) = try console()
        let authenticator = SoftAuthenticator()
        let credential = try await enrolled(console, staff, authenticator)
        let (_, session) = try await signIn(console, authenticator, credential)
        let options = try await console.confirmationOptions(session)
        #expect(options.allowCredentials.map(\.id) == [Base64URL.encode(credential.id)])
        try await console.confirm(session, credential: authenticator.getAssertion(credential: credential, challenge: options.challenge))
        // Another session's challenge, or a sign-in's, does not confirm this one.
        let (_, other) = try await signIn(console, authenticator, credential)
        let othersOptions = try await console.confirmationOptions(other)
        await #expect(throws: StaffError.invalidCredential) {
            try await console.confirm(
                session, credential: authenticator.getAssertion(credential: credential, challenge: othersOptions.challenge))
        }
        let types = await staff.events.map(\.event.type)
        #expect(types.filter { $0 == "staff.passkey_confirmed" }.count == 1)
    }

    @Test("inviting again before registering replaces the link; someone with a passkey is already staff")
    func reinvite() async throws {
        let (console, staff) = try console()
        let first = try await console.invite(email: "nino@321.fit", role: .support)
        let firstToken = try await invitationToken(staff)
        let second = try await console.invite(email: "Nino@321.fit", role: .admin)
        #expect(first.staffID == second.staffID)
        await #expect(throws: StaffError.invitationExpired) { _ = try await console.invitation(token: firstToken) }
        #expect(try await console.invitation(token: try await invitationToken(staff)).role == .admin)
        _ = try await enrolled(console, staff, SoftAuthenticator(), email: "lela@321.fit")
        await #expect(throws: StaffError.self) { _ = try await console.invite(email: "lela@321.fit", role: .admin) }
        #expect(try await console.list().map(\.email) == ["Nino@321.fit", "lela@321.fit"], "as last invited")
    }
}
