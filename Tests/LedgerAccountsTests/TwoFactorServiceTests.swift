import Foundation
import LedgerAccounts
import LedgerIdentity
import Testing

/// The two-factor rules without a database: enrolment behind re-auth, the sign-in challenge
/// (5 minutes, 5 wrong codes), recovery codes used once, and the day's cap on wrong codes.
@Suite("Two-factor in memory: enrolment, the sign-in challenge, recovery codes")
struct TwoFactorServiceTests {
    /// An account with TOTP on: its email, its raw secret and its recovery codes.
    func enrolled(_ world: InMemoryAccounts) async throws -> (email: String, secret: String, recovery: [String]) {
        let email = InMemoryAccounts.newEmail()
        let session = try await world.signUp(email, verified: true)
        await #expect(throws: IdentityError.self) { try await world.twoFactor.beginTOTP(session, reauthToken: nil) }
        let enrolment = try await world.twoFactor.beginTOTP(session, reauthToken: try await world.passwordGrant(session))
        let secret = try #require(TOTPCodes.secret(fromBase32: enrolment.secret))
        let recovery = try await world.twoFactor.confirmTOTP(session, code: code(secret, world), client: nil)
        return (email, secret, recovery)
    }

    /// The authenticator app's code of now (or `steps` later).
    func code(_ secret: String, _ world: InMemoryAccounts, steps: Int64 = 0) -> String {
        TOTPCodes.code(secret, step: TOTPCodes.step(at: world.clock.now()) + steps)
    }

    /// The `mfa_token` a password sign-in answers with.
    func challenge(_ world: InMemoryAccounts, _ email: String) async throws -> String {
        do {
            _ = try await world.signedIn(email)
        } catch let required as MFARequired {
            return required.token
        }
        Issue.record("the sign-in did not ask for the second factor")
        return ""
    }

    func identityError(_ body: () async throws -> Any) async -> IdentityError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? IdentityError
        }
    }

    @Test("enrolment needs re-auth and a first code; then a sign-in asks for the code, and the code signs in")
    func signIn() async throws {
        let world = try InMemoryAccounts()
        let (email, secret, recovery) = try await enrolled(world)
        #expect(recovery.count == 10 && Set(recovery).count == 10)
        // The enrolment used this step's code: a code is good once.
        world.clock.advance(by: 30)
        let token = try await challenge(world, email)
        let session = try await world.twoFactor.verify(mfaToken: token, code: code(secret, world), recoveryCode: nil, client: nil)
        #expect(try await world.accounts.authenticate(accessToken: session.accessToken)?.sessionID == session.sessionID)
        // The challenge is spent.
        #expect(
            await identityError {
                try await world.twoFactor.verify(mfaToken: token, code: code(secret, world), recoveryCode: nil, client: nil)
            }?.code == .mfaExpired)
    }

    @Test("one step of drift either way is accepted, two are not")
    func drift() async throws {
        let world = try InMemoryAccounts()
        let (email, secret, _) = try await enrolled(world)
        // The enrolment's code was this step's: a later step proves the device again.
        world.clock.advance(by: 30)
        let late = try await challenge(world, email)
        #expect(
            await identityError {
                try await world.twoFactor.verify(mfaToken: late, code: code(secret, world, steps: 2), recoveryCode: nil, client: nil)
            }?.code == .incorrectCode)
        _ = try await world.twoFactor.verify(mfaToken: late, code: code(secret, world, steps: 1), recoveryCode: nil, client: nil)
        // Three steps on, the step before now was never used: a slow clock's code still works.
        world.clock.advance(by: 90)
        let slow = try await challenge(world, email)
        _ = try await world.twoFactor.verify(mfaToken: slow, code: code(secret, world, steps: -1), recoveryCode: nil, client: nil)
    }

    @Test("5 wrong codes end the challenge; a challenge lasts 5 minutes")
    func challengeLimits() async throws {
        let world = try InMemoryAccounts()
        let (email, secret, _) = try await enrolled(world)
        let token = try await challenge(world, email)
        for remaining in (0..<5).reversed() {
            let refused = await identityError {
                try await world.twoFactor.verify(mfaToken: token, code: "000000", recoveryCode: nil, client: nil)
            }
            if remaining > 0 {
                #expect(refused?.code == .incorrectCode && refused?.attemptsRemaining == remaining)
            } else {
                #expect(refused?.code == .mfaExpired, "the fifth wrong code ends the challenge")
            }
        }
        #expect(
            await identityError {
                try await world.twoFactor.verify(mfaToken: token, code: code(secret, world), recoveryCode: nil, client: nil)
            }?.code == .mfaExpired)
        world.clock.advance(by: 31)
        let slow = try await challenge(world, email)
        world.clock.advance(by: 300)
        #expect(
            await identityError {
                try await world.twoFactor.verify(mfaToken: slow, code: code(secret, world), recoveryCode: nil, client: nil)
            }?.code == .mfaExpired)
    }

    @Test("a recovery code signs in once")
    func recoveryCode() async throws {
        let world = try InMemoryAccounts()
        let (email, _, recovery) = try await enrolled(world)
        _ = try await world.twoFactor.verify(mfaToken: try await challenge(world, email), code: nil, recoveryCode: recovery[0], client: nil)
        let again = try await challenge(world, email)
        #expect(
            await identityError { try await world.twoFactor.verify(mfaToken: again, code: nil, recoveryCode: recovery[0], client: nil) }?
                .code == .incorrectCode)
        _ = try await world.twoFactor.verify(mfaToken: again, code: nil, recoveryCode: recovery[1], client: nil)
    }

    @Test("the challenge's attempts are the policies' (mfaMaxFailures), configured")
    func configured() async throws {
        var policies = Policies.standard
        policies.mfaMaxFailures = 2
        let world = try InMemoryAccounts(policies: policies)
        let (email, _, _) = try await enrolled(world)
        let token = try await challenge(world, email)
        let first = await identityError {
            try await world.twoFactor.verify(mfaToken: token, code: "000000", recoveryCode: nil, client: nil)
        }
        #expect(first?.attemptsRemaining == 1)
    }
}
