import Foundation
import LedgerIdentity
import Testing

@Suite("decide: two-factor authentication, sign-in step-up, new devices")
struct TwoFactorDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let session = UUID()
    static let tokens = AccountCommand.SessionTokens(
        accessTokenHash: "a2", refreshTokenHash: "r2", accessExpiresAt: Date.distantFuture, refreshExpiresAt: Date.distantFuture)
    /// What a password sign-in to `account()` checked.
    static let password = SignInProof.password(hash: "h", email: "ana@example.com")

    /// A verified email account signed in on an iPhone, with a grant ("g") of that session,
    /// and the events given.
    func account(_ events: [AccountEvent] = []) -> AccountState {
        let setup: [AccountEvent] = [
            .registered(.init(email: "ana@example.com", displayName: nil, method: "email")),
            .passwordSet(.init(passwordHash: "h", reason: .signup)),
            .emailVerified(.init(email: "ana@example.com")),
            .sessionStarted(
                .init(
                    sessionID: session, method: "email", device: "iPhone · 321Fit 4.2", accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
            .reauthGranted(
                .init(grantID: UUID(), sessionID: session, method: "password", tokenHash: "g", expiresAt: now.addingTimeInterval(900))),
        ]
        return (setup + events).reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
    }

    /// The same with TOTP on (last step used: 100) and two recovery codes.
    func withTOTP(_ events: [AccountEvent] = []) -> AccountState {
        account(
            [
                .totpEnrolmentStarted(.init(secret: "s")), .totpCodeUsed(.init(step: 100)),
                .totpEnabled(.init(recoveryCodeHashes: ["rc1", "rc2"])),
            ] + events)
    }

    func challenge(_ id: UUID = UUID(), expires: TimeInterval = 300, link: String? = nil) -> AccountCommand.NewChallenge {
        .init(challengeID: id, tokenHash: "th", expiresAt: now.addingTimeInterval(expires), linkToken: link)
    }

    func newSession(device: String? = "Mac · Chrome 120", stepUp: AccountCommand.NewChallenge? = nil, deviceID: UUID? = nil)
        -> AccountCommand.NewSession
    {
        .init(sessionID: UUID(), method: "email", device: device, tokens: Self.tokens, stepUp: stepUp, deviceID: deviceID)
    }

    @Test("enrolment needs re-auth (manage_mfa) and a first code of a fresh step; it is on only then, with its recovery codes")
    func enrolment() throws {
        let state = account()
        #expect(throws: IdentityError.reauthRequired) {
            try decide(state, .startTOTPEnrolment(secret: "s", sessionID: session, reauthTokenHash: nil), now: now)
        }
        let started = try decide(state, .startTOTPEnrolment(secret: "s", sessionID: session, reauthTokenHash: "g"), now: now)
            .reduce(state) { evolve($0, $1, at: now) }
        #expect(started.totp?.secret == "s" && !started.isTOTPEnabled)
        #expect(throws: IdentityError.self) {
            try decide(started, .confirmTOTP(step: nil, recoveryCodeHashes: ["x"], sessionID: session), now: now)
        }
        // Only the session that began it confirms it: a stolen one cannot finish the owner's enrolment.
        #expect(throws: IdentityError.self) {
            try decide(started, .confirmTOTP(step: 7, recoveryCodeHashes: ["x"], sessionID: UUID()), now: now)
        }
        let on = try decide(started, .confirmTOTP(step: 7, recoveryCodeHashes: ["x"], sessionID: session), now: now)
            .reduce(started) { evolve($0, $1, at: now) }
        #expect(on.isTOTPEnabled && on.recoveryCodeHashes == ["x"] && on.totp?.lastUsedStep == 7)
        #expect(on.reauthOptions(for: .changePassword).methods.contains(.totp))
        #expect(throws: IdentityError.mfaAlreadyEnabled) {
            try decide(on, .startTOTPEnrolment(secret: "t", sessionID: session, reauthTokenHash: "g"), now: now)
        }
        // Off with re-auth: the secret and the codes go.
        let off = try decide(on, .disableTOTP(sessionID: session, reauthTokenHash: "g"), now: now).reduce(on) { evolve($0, $1, at: now) }
        #expect(off.totp == nil && off.recoveryCodeHashes.isEmpty)
    }

    @Test("with TOTP on, a sign-in issues a challenge instead of a session; one that brings none is refused")
    func stepUp() throws {
        let state = withTOTP()
        #expect(throws: IdentityError.self) { try decide(state, .startSession(newSession(), proof: Self.password), now: now) }
        let id = UUID()
        let events = try decide(state, .startSession(newSession(stepUp: challenge(id, link: "lt_x")), proof: Self.password), now: now)
        #expect(events.count == 1)
        guard case .mfaChallengeIssued(let issued) = events.first else {
            Issue.record("no challenge")
            return
        }
        #expect(issued.challengeID == id && issued.linkToken == "lt_x" && issued.expiresAt == now.addingTimeInterval(300))
        // Without TOTP the same sign-in starts the session.
        #expect(
            try decide(account(), .startSession(newSession(stepUp: challenge()), proof: Self.password), now: now).contains {
                $0.kind == .sessionStarted
            })
    }

    @Test(
        "the challenge: a code of a later step passes once, an earlier or the same step is a wrong code; 5 wrong end it; 5 minutes end it")
    func challengeRules() throws {
        let id = UUID()
        var state = try decide(withTOTP(), .startSession(newSession(stepUp: challenge(id)), proof: Self.password), now: now)
            .reduce(withTOTP()) { evolve($0, $1, at: now) }
        func answer(_ proof: AccountCommand.MFAProof, hash: String = "th", at time: Date? = nil) throws -> [AccountEvent] {
            try decide(
                state, .completeMFAChallenge(challengeID: id, tokenHash: hash, proof: proof, session: newSession()), now: time ?? now)
        }
        #expect(throws: IdentityError.mfaExpired) { try answer(.totp(step: 101), hash: "other") }
        #expect(throws: IdentityError.mfaExpired) { try answer(.totp(step: 101), at: now.addingTimeInterval(300)) }
        // A replayed step (100 was used) counts as wrong.
        let replay = try answer(.totp(step: 100))
        #expect(replay == [.mfaChallengeFailed(.init(challengeID: id, failures: 1))])
        let passed = try answer(.totp(step: 101))
        #expect(passed.first == .totpCodeUsed(.init(step: 101)) && passed.contains { $0.kind == .sessionStarted })
        #expect(passed.contains(.mfaChallengeEnded(.init(challengeID: id, reason: "passed"))))
        for failures in 1...4 {
            let events = try answer(.totp(step: nil))
            #expect(events == [.mfaChallengeFailed(.init(challengeID: id, failures: failures))])
            state = events.reduce(state) { evolve($0, $1, at: now) }
        }
        let fifth = try answer(.recoveryCode(hash: "nope"))
        #expect(fifth.last == .mfaChallengeEnded(.init(challengeID: id, reason: "too_many_failures")))
        state = fifth.reduce(state) { evolve($0, $1, at: now) }
        #expect(throws: IdentityError.mfaExpired) { try answer(.totp(step: 102)) }
    }

    @Test("a recovery code works once; new codes void the old ones")
    func recoveryCodes() throws {
        let id = UUID()
        let state = try decide(withTOTP(), .startSession(newSession(stepUp: challenge(id)), proof: Self.password), now: now)
            .reduce(withTOTP()) { evolve($0, $1, at: now) }
        let used = try decide(
            state, .completeMFAChallenge(challengeID: id, tokenHash: "th", proof: .recoveryCode(hash: "rc1"), session: newSession()),
            now: now)
        let after = used.reduce(state) { evolve($0, $1, at: now) }
        #expect(after.recoveryCodeHashes == ["rc2"])
        let regenerated = try decide(after, .regenerateRecoveryCodes(["n1", "n2"], sessionID: session, reauthTokenHash: "g"), now: now)
            .reduce(after) { evolve($0, $1, at: now) }
        #expect(regenerated.recoveryCodeHashes == ["n1", "n2"])
        #expect(throws: IdentityError.reauthRequired) {
            try decide(after, .regenerateRecoveryCodes(["n1"], sessionID: session, reauthTokenHash: nil), now: now)
        }
    }

    @Test("re-auth by TOTP: a fresh step grants, the same step again does not")
    func reauth() throws {
        let grant = AccountCommand.NewGrant(grantID: UUID(), method: .totp, tokenHash: "t1", lifetime: 900)
        let state = withTOTP()
        let granted = try decide(state, .grantReauthByTOTP(sessionID: session, grant, step: 101), now: now)
        #expect(granted.first == .totpCodeUsed(.init(step: 101)) && granted.contains { $0.kind == .reauthGranted })
        let after = granted.reduce(state) { evolve($0, $1, at: now) }
        #expect(throws: IdentityError.self) { try decide(after, .grantReauthByTOTP(sessionID: session, grant, step: 101), now: now) }
        #expect(throws: IdentityError.self) { try decide(account(), .grantReauthByTOTP(sessionID: session, grant, step: 101), now: now) }
    }

    @Test("the wrong code that spends a day's limit is on the history of an account with TOTP on, with the session whose day it was")
    func dailyLimitAlert() throws {
        let until = now.addingTimeInterval(86_400)
        #expect(
            try decide(withTOTP(), .recordMFADailyLimit(until: until, sessionID: nil), now: now) == [
                .mfaDailyLimitReached(.init(until: until, sessionID: nil))
            ])
        let reached = try decide(withTOTP(), .recordMFADailyLimit(until: until, sessionID: session), now: now)
        #expect(reached == [.mfaDailyLimitReached(.init(until: until, sessionID: session))])
        // A record of what happened changes nothing of the account.
        var state = withTOTP()
        let after = reached.reduce(state) { evolve($0, $1, at: now) }
        state.version += 1
        #expect(after == state)
        // Only where a second factor is on: wrong TOTP re-auths of an account without one guess
        // nothing, and must not let a session holder fill the owner's mailbox.
        #expect(try decide(account(), .recordMFADailyLimit(until: until, sessionID: session), now: now).isEmpty)
        #expect(try decide(AccountState(accountID: UUID()), .recordMFADailyLimit(until: until, sessionID: nil), now: now).isEmpty)
    }

    @Test("a sign-in from a device the account has not seen tells its verified address; devices are known by id, never by label")
    func newDevice() throws {
        let state = account()
        let mac = UUID()
        let fresh = newSession(device: "Mac · Chrome 120", deviceID: mac)
        let events = try decide(state, .startSession(fresh, proof: Self.password), now: now)
        #expect(events.contains(.newDeviceAlerted(.init(sessionID: fresh.sessionID, device: "Mac · Chrome 120", email: "ana@example.com"))))
        let after = events.reduce(state) { evolve($0, $1, at: now) }
        #expect(after.knownDevices.contains(mac))
        func alerts(_ session: AccountCommand.NewSession) throws -> Bool {
            try decide(after, .startSession(session, proof: Self.password), now: now).contains { $0.kind == .newDeviceAlerted }
        }
        // The same device, whatever it calls itself now.
        #expect(!(try alerts(newSession(device: "Mac · Chrome 121", deviceID: mac))))
        #expect(!(try alerts(newSession(device: "iPhone · 321Fit 4.3", deviceID: mac))))
        // Another device that copies the label (an attacker sending the app's usual User-Agent) is new.
        #expect(try alerts(newSession(device: "Mac · Chrome 120", deviceID: UUID())))
        #expect(try alerts(newSession(device: "Mac · Chrome 120")))
        // The account remembers its most recent devices, not every one ever.
        var many = after
        for _ in 0..<(maximumKnownDevices + 5) {
            many = try decide(many, .startSession(newSession(deviceID: UUID()), proof: Self.password), now: now).reduce(many) {
                evolve($0, $1, at: now)
            }
        }
        #expect(many.knownDevices.count == maximumKnownDevices && !many.knownDevices.contains(mac))
        // "Sign out all other devices" ends every session but this one.
        let others = try decide(after, .revokeOtherSessions(keep: session), now: now)
        #expect(others.count == 1 && others.allSatisfy { $0.kind == .sessionRevoked })
    }

    @Test("device labels: the app's name wins; else the User-Agent read as platform and app or browser")
    func deviceLabels() {
        #expect(DeviceLabel.describe(deviceName: " Ana's  iPhone ", userAgent: "x") == "Ana's iPhone")
        #expect(DeviceLabel.describe(deviceName: nil, userAgent: "321Fit/4.2 (iPhone; iOS 17.1; Scale/3.00)") == "iPhone · 321Fit 4.2")
        #expect(
            DeviceLabel.describe(
                deviceName: nil,
                userAgent:
                    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
            ) == "Mac · Chrome 120")
        #expect(DeviceLabel.describe(deviceName: nil, userAgent: "Handz/2.0.1 (Android 14; Pixel 8)") == "Android · Handz 2.0.1")
        #expect(DeviceLabel.describe(deviceName: nil, userAgent: nil) == nil)
        #expect(DeviceLabel.key("iPhone · 321Fit 4.2") == DeviceLabel.key("iPhone · 321Fit 4.3"))
        // Bidi overrides, isolates and zero-width characters are dropped, controls become spaces.
        #expect(DeviceLabel.describe(deviceName: "\u{202E}enohPi\u{202C} s'anA", userAgent: nil) == "enohPi s'anA")
        #expect(DeviceLabel.describe(deviceName: "i\u{200B}Phone\u{2066}\u{FEFF}\tX", userAgent: nil) == "iPhone X")
        #expect(DeviceLabel.describe(deviceName: "\u{200D}\u{2067}", userAgent: "Handz/2.0 (Android)") == "Android · Handz 2.0")
    }

    @Test("an unverified email's password turns on no second factor: neither its grant nor the account itself")
    func unverifiedSquatter() throws {
        let unverified = [
            AccountEvent.registered(.init(email: "victim@example.com", displayName: nil, method: "email")),
            .passwordSet(.init(passwordHash: "h", reason: .signup)),
            .sessionStarted(
                .init(
                    sessionID: session, method: "email", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
            .reauthGranted(
                .init(grantID: UUID(), sessionID: session, method: "password", tokenHash: "g", expiresAt: now.addingTimeInterval(900))),
        ].reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        #expect(throws: IdentityError.self) {
            try decide(unverified, .startTOTPEnrolment(secret: "s", sessionID: session, reauthTokenHash: "g"), now: now)
        }
        #expect(!unverified.reauthOptions(for: .manageMFA).methods.contains(.password))
    }

    @Test("a password reset or change, or a revert, ends the sign-ins waiting for their second factor; at most 20 wait")
    func recoveryEndsChallenges() throws {
        var state = withTOTP()
        for _ in 0..<25 {
            state = try decide(state, .startSession(newSession(stepUp: challenge()), proof: Self.password), now: now).reduce(state) {
                evolve($0, $1, at: now)
            }
        }
        #expect(state.mfaChallenges.count == maximumOpenChallenges)
        let reset = evolve(state, .passwordSet(.init(passwordHash: "h2", reason: .reset)), at: now)
        #expect(reset.mfaChallenges.isEmpty)
        #expect(evolve(state, .passwordSet(.init(passwordHash: "h2", reason: .change)), at: now).mfaChallenges.isEmpty)
    }
}
