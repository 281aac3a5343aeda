import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerTestSupport
import Testing

/// Attempt counters that run a test's action once, when a sign-in clears its email's count:
/// after the password was checked against the hash it read, before `.startSession` runs.
actor HookedAttemptCounters: AttemptCounters {
    private let inner = InMemoryAttemptCounters()
    private var hook: (@Sendable () async throws -> Void)?

    func arm(_ action: @escaping @Sendable () async throws -> Void) { hook = action }

    func count(_ key: String, window: TimeInterval, now: Date) async throws -> AttemptCount {
        try await inner.count(key, window: window, now: now)
    }

    func lock(_ key: String, reaching limit: Int, for window: TimeInterval, now: Date) async throws -> Date? {
        try await inner.lock(key, reaching: limit, for: window, now: now)
    }

    func uncount(_ key: String, inWindowStartedAt windowStarted: Date) async throws {
        try await inner.uncount(key, inWindowStartedAt: windowStarted)
    }

    func clear(_ key: String) async throws {
        try await inner.clear(key)
        if key.hasPrefix("email:"), let action = hook {
            hook = nil
            try await action()
        }
    }
}

/// What a revert must win against when it commits in the middle of someone else's command
/// (the second review of the recovery path): a sign-in whose password was checked before it,
/// and a TOTP confirmation authenticated before it.
@Suite("Recovery races, in memory")
struct RecoveryRaceTests {
    static let password = "violet-harbor-91"

    @Test("a password sign-in checked before a revert starts no session after it")
    func signInStraddlingRevert() async throws {
        let clock = ManualClock()
        let repository = try InMemoryAccountRepository(clock: clock)
        let counters = HookedAttemptCounters()
        let environment = AccountsEnvironment(
            repository: repository, clock: clock, hasher: try PasswordHasher(parameters: Scrypt(logN: 4)), counters: counters,
            retention: .development, devices: .development)
        let accounts = AccountService(environment: environment)
        let reauth = ReauthService(environment: environment)

        // The owner's account, its address verified; the intruder holds the password (phished)
        // and the owner's session (stolen).
        let email = "ana-\(UUID().uuidString.prefix(6).lowercased())@example.com"
        let signedUp = try await accounts.signUp(email: email, password: Self.password, displayName: nil, handle: nil, device: "owner")
        _ = try await accounts.verifyEmail(token: try #require(await repository.outbox.last { $0.template == "verify_email" }?.token))
        let stolen = SessionRef(accountID: signedUp.accountID, sessionID: signedUp.sessionID)
        let grant = try await reauth.withPassword(stolen, password: Self.password, client: nil)
        try await accounts.requestEmailChange(stolen, newEmail: "mallory@example.net", reauthToken: grant.token)
        _ = try await accounts.confirmEmailChange(
            token: try #require(await repository.outbox.last { $0.template == "email_change_confirm" }?.token))
        let revert = try #require(await repository.outbox.last { $0.template == "email_changed_notice" }?.token)

        // The intruder signs in again; the owner's revert commits while this sign-in's check of
        // the old hash is under way.
        await counters.arm {
            let undone = try await accounts.revertEmail(token: revert, newPassword: "amber-orchard-52")
            #expect(undone.state.email == email)
        }
        await #expect(throws: IdentityError.invalidCredentials) {
            try await accounts.signIn(email: "mallory@example.net", password: Self.password, device: "intruder")
        }
        let after = try await repository.load(signedUp.accountID)
        #expect(after.email == email && after.sessions.values.filter(\.isActive).isEmpty)
    }

    @Test("two sign-ins with the right password while its hash is rehashed both start a session")
    func concurrentRehash() async throws {
        let clock = ManualClock()
        let repository = try InMemoryAccountRepository(clock: clock)
        func accounts(logN: Int, _ counters: any AttemptCounters) throws -> AccountService {
            AccountService(
                environment: AccountsEnvironment(
                    repository: repository, clock: clock, hasher: try PasswordHasher(parameters: Scrypt(logN: logN)), counters: counters,
                    retention: .development, devices: .development))
        }
        let email = "ana-\(UUID().uuidString.prefix(6).lowercased())@example.com"
        _ = try await accounts(logN: 4, InMemoryAttemptCounters()).signUp(
            email: email, password: Self.password, displayName: nil, handle: nil, device: "a")
        // The cost went up: each sign-in rehashes. B signs in (and rehashes) while A's check of the old hash runs.
        let counters = HookedAttemptCounters()
        let raised = try accounts(logN: 5, counters)
        let other = try accounts(logN: 5, InMemoryAttemptCounters())
        await counters.arm { _ = try await other.signIn(email: email, password: Self.password, device: "b") }
        let first = try await raised.signIn(email: email, password: Self.password, device: "a")
        #expect(try await raised.authenticate(accessToken: first.accessToken) != nil)
    }

    @Test("a TOTP enrolment of the intruder's session, confirmed after the revert ended that session, stays off")
    func totpConfirmedAfterRevert() async throws {
        let world = try InMemoryAccounts()
        let email = InMemoryAccounts.newEmail()
        // The owner's session, stolen; and the intruder's own, by the phished password, where an
        // enrolment begins (pending, not confirmed).
        let stolen = try await world.signUp(email, verified: true)
        let second = try await world.signIn(email)
        let enrolment = try await world.twoFactor.beginTOTP(second, reauthToken: try await world.passwordGrant(second))
        let secret = try #require(TOTPCodes.secret(fromBase32: enrolment.secret))
        try await world.accounts.requestEmailChange(
            stolen, newEmail: "mallory@example.net", reauthToken: try await world.passwordGrant(stolen))
        _ = try await world.accounts.confirmEmailChange(
            token: try #require(await world.repository.outbox.last { $0.template == "email_change_confirm" }?.token))
        let revert = try #require(await world.repository.outbox.last { $0.template == "email_changed_notice" }?.token)

        // The confirmation was authenticated before the revert (its body sent slowly) and is
        // decided after it.
        let accounts = world.accounts
        await world.repository.afterNextLoad(of: second.accountID) {
            _ = try await accounts.revertEmail(token: revert, newPassword: "amber-orchard-52")
        }
        world.clock.advance(by: 30)
        let code = TOTPCodes.code(secret, step: TOTPCodes.step(at: world.clock.now()))
        await #expect(throws: IdentityError.sessionExpired) { try await world.twoFactor.confirmTOTP(second, code: code, client: nil) }

        let after = try await world.repository.load(second.accountID)
        #expect(after.email == email && after.sessions[second.sessionID]?.isActive == false)
        #expect(!after.isTOTPEnabled && after.totp == nil)
        // The owner, with the new password, meets no second factor.
        _ = try await world.accounts.signIn(email: email, password: "amber-orchard-52", device: "owner")
    }
}
