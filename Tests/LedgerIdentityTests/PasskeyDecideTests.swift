import Foundation
import LedgerIdentity
import Testing

@Suite("decide: passkeys")
struct PasskeyDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let session = UUID()
    static let tokens = AccountCommand.SessionTokens(
        accessTokenHash: "a2", refreshTokenHash: "r2", accessExpiresAt: Date.distantFuture, refreshExpiresAt: Date.distantFuture)

    /// A verified email account signed in, with a grant ("g") of that session, and the events given.
    func account(_ events: [AccountEvent] = [], password: Bool = true) -> AccountState {
        var setup: [AccountEvent] = [.registered(.init(email: password ? "ana@example.com" : nil, displayName: nil, method: "email"))]
        if password { setup += [.passwordSet(.init(passwordHash: "h", reason: .signup)), .emailVerified(.init(email: "ana@example.com"))] }
        setup += [
            .sessionStarted(
                .init(
                    sessionID: session, method: "email", device: "iPhone", accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
            .reauthGranted(
                .init(
                    grantID: UUID(), sessionID: session, method: password ? "password" : "phone", tokenHash: "g",
                    expiresAt: now.addingTimeInterval(900))),
        ]
        return (setup + events).reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
    }

    func newPasskey(_ id: UUID = UUID(), credential: String = "Y3JlZC0x", handle: String = "aGFuZGxl", signCount: Int64 = 0)
        -> AccountEvent.PasskeyRegistered
    {
        .init(
            passkeyID: id, credentialID: credential, publicKey: "cHVi", algorithm: -7, signCount: signCount, name: "Passkey",
            userHandle: handle, backupEligible: true, backedUp: true, transports: ["internal"], attestationFormat: "none",
            sessionID: nil)
    }

    func registered(_ state: AccountState, _ passkey: AccountEvent.PasskeyRegistered) throws -> AccountState {
        try decide(state, .registerPasskey(passkey, sessionID: session, reauthTokenHash: "g"), now: now)
            .reduce(state) { evolve($0, $1, at: now) }
    }

    func newSession() -> AccountCommand.NewSession {
        .init(sessionID: UUID(), method: "email", device: "Mac", tokens: Self.tokens)
    }

    @Test("registration needs re-auth (add_method); the passkey then counts as a sign-in method and a re-auth method")
    func registration() throws {
        let state = account()
        #expect(throws: IdentityError.reauthRequired) {
            try decide(state, .registerPasskey(newPasskey(), sessionID: session, reauthTokenHash: nil), now: now)
        }
        let id = UUID()
        let after = try registered(state, newPasskey(id))
        #expect(after.passkeys[id]?.name == "Passkey" && after.passkeyUserHandle == "aGFuZGxl")
        #expect(after.signInMethods == [.password, .passkey])
        #expect(after.reauthOptions(for: .changePassword).methods.contains(.passkey))
        // Not for removing a passkey: the target cannot vouch for itself.
        #expect(!after.reauthOptions(for: .managePasskeys).methods.contains(.passkey))
    }

    @Test("the same credential twice is passkey_exists; a second handle, or more than the limit, is refused")
    func registrationRules() throws {
        var state = try registered(account(), newPasskey(credential: "Y3JlZC0x"))
        #expect(throws: IdentityError.passkeyExists) {
            try decide(state, .registerPasskey(newPasskey(credential: "Y3JlZC0x"), sessionID: session, reauthTokenHash: "g"), now: now)
        }
        #expect(throws: IdentityError.invalidCredential) {
            try decide(
                state, .registerPasskey(newPasskey(credential: "b3RoZXI", handle: "b3RoZXI"), sessionID: session, reauthTokenHash: "g"),
                now: now)
        }
        for index in 1..<maximumPasskeys { state = try registered(state, newPasskey(credential: "Y3JlZC0\(index)x")) }
        #expect(state.passkeys.count == maximumPasskeys)
        #expect(throws: IdentityError.passkeyLimit) {
            try decide(state, .registerPasskey(newPasskey(credential: "bGFzdA"), sessionID: session, reauthTokenHash: "g"), now: now)
        }
    }

    @Test("removal: 404 for an unknown passkey, last_method before re-auth for the only way in, else re-auth (manage_passkeys)")
    func removal() throws {
        let only = UUID()
        // An account whose only method is a passkey (a phone-less, password-less account).
        let passkeyOnly = try registered(account(password: false), newPasskey(only))
        #expect(passkeyOnly.signInMethods == [.passkey])
        #expect(throws: IdentityError.passkeyNotFound) {
            try decide(passkeyOnly, .removePasskey(passkeyID: UUID(), sessionID: session, reauthTokenHash: "g"), now: now)
        }
        #expect(throws: IdentityError(.lastMethod, "Add another way to sign in before removing this passkey.")) {
            try decide(passkeyOnly, .removePasskey(passkeyID: only, sessionID: session, reauthTokenHash: nil), now: now)
        }
        // A second passkey: either may go, with re-auth.
        let second = UUID()
        let two = try registered(passkeyOnly, newPasskey(second, credential: "c2Vjb25k"))
        #expect(throws: IdentityError.reauthRequired) {
            try decide(two, .removePasskey(passkeyID: only, sessionID: session, reauthTokenHash: nil), now: now)
        }
        let events = try decide(two, .removePasskey(passkeyID: only, sessionID: session, reauthTokenHash: "g"), now: now)
        #expect(events == [.passkeyRemoved(.init(passkeyID: only))])
        #expect(events.reduce(two) { evolve($0, $1, at: now) }.passkeys[only] == nil)
    }

    /// `state` with a passkey grant ("pk") of `session`, earned by `passkey` at `time`.
    func grantedBy(_ passkey: UUID, _ state: AccountState, at time: Date) throws -> AccountState {
        let grant = AccountCommand.NewGrant(grantID: UUID(), method: .passkey, tokenHash: "pk", lifetime: 900)
        return try decide(
            state, .grantReauthByPasskey(sessionID: session, grant, .init(passkeyID: passkey, signCount: 0, backedUp: true)), now: time
        )
        .reduce(state) { evolve($0, $1, at: time) }
    }

    /// What removing `target` decides at `time` with a grant `voucher` earned then.
    func removal(of target: UUID, vouchedBy voucher: UUID, in state: AccountState, at time: Date) throws -> [AccountEvent] {
        try decide(
            try grantedBy(voucher, state, at: time), .removePasskey(passkeyID: target, sessionID: session, reauthTokenHash: "pk"), now: time
        )
    }

    @Test(
        "a passkey's grant removes another passkey only once passkeys have been all that vouches for the account for 7 days, never itself"
    )
    func removalByPasskey() throws {
        let (first, second) = (UUID(), UUID())
        // Passkeys only since `now` (a phone-less, password-less account).
        let passkeysOnly = try registered(
            try registered(account(password: false), newPasskey(first)), newPasskey(second, credential: "c2Vjb25k"))
        #expect(passkeysOnly.signInMethods == [.passkey] && passkeysOnly.passkeyOnlySince == now)
        // Not yet: a passkey is no option, and its grant removes nothing.
        let soon = now.addingTimeInterval(AccountState.passkeyVouchingDelay - 60)
        #expect(passkeysOnly.reauthOptions(for: .managePasskeys, now: soon) == ReauthOptions(methods: [], lastMethod: false))
        #expect(throws: IdentityError.reauthRequired) { try removal(of: second, vouchedBy: first, in: passkeysOnly, at: soon) }
        // A week on: one passkey vouches for removing the other, never for itself.
        let later = now.addingTimeInterval(AccountState.passkeyVouchingDelay)
        #expect(passkeysOnly.reauthOptions(for: .managePasskeys, now: later) == ReauthOptions(methods: [.passkey], lastMethod: false))
        let byFirst = try grantedBy(first, passkeysOnly, at: later)
        #expect(byFirst.reauthGrant(tokenHash: "pk", sessionID: session, now: later)?.passkeyID == first)
        #expect(throws: IdentityError(.reauthRequired, "Verify it's you with another passkey to remove this one.")) {
            try decide(byFirst, .removePasskey(passkeyID: first, sessionID: session, reauthTokenHash: "pk"), now: later)
        }
        #expect(
            try decide(byFirst, .removePasskey(passkeyID: second, sessionID: session, reauthTokenHash: "pk"), now: later) == [
                .passkeyRemoved(.init(passkeyID: second))
            ])
        // Beside another way in (a password), a passkey's grant removes no passkey, and is not offered.
        let beside = try registered(try registered(account(), newPasskey(first)), newPasskey(second, credential: "c2Vjb25k"))
        #expect(beside.passkeyOnlySince == nil && !beside.reauthOptions(for: .managePasskeys, now: later).methods.contains(.passkey))
        #expect(throws: IdentityError.reauthRequired) { try removal(of: second, vouchedBy: first, in: beside, at: later) }
    }

    @Test("one stolen passkey's grant that removes the phone cannot remove the owner's other passkey next: nobody would be told")
    func passkeyEscalation() throws {
        let (owners, thiefs) = (UUID(), UUID())
        // A phone account with two passkeys for weeks: the owner's, and one on a laptop now stolen.
        var state = try registered(try registered(account(password: false), newPasskey(owners)), newPasskey(thiefs, credential: "dGhpZWY"))
        state = evolve(state, .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)), at: now)
        let weeksLater = now.addingTimeInterval(30 * 86_400)
        var taken = try grantedBy(thiefs, state, at: weeksLater)
        taken = try decide(taken, .removePhone(sessionID: session, reauthTokenHash: "pk"), now: weeksLater)
            .reduce(taken) { evolve($0, $1, at: weeksLater) }
        #expect(taken.signInMethods == [.passkey] && taken.passkeyOnlySince == weeksLater)
        #expect(throws: IdentityError.reauthRequired) {
            try decide(taken, .removePasskey(passkeyID: owners, sessionID: session, reauthTokenHash: "pk"), now: weeksLater)
        }
        // Another grant the same day changes nothing: the week counts from the phone's removal.
        let again = try grantedBy(thiefs, taken, at: weeksLater.addingTimeInterval(3600))
        #expect(throws: IdentityError.reauthRequired) {
            try decide(
                again, .removePasskey(passkeyID: owners, sessionID: session, reauthTokenHash: "pk"),
                now: weeksLater.addingTimeInterval(3600))
        }
    }

    @Test("beside an email link (a verified address without a password), or TOTP, a passkey does not vouch for removing passkeys")
    func passkeyBesideOtherVouchers() throws {
        let (owners, thiefs) = (UUID(), UUID())
        // Registered with Google (address verified, no password), passkeys added, Google disconnected long ago.
        var state = AccountState(accountID: UUID())
        for event: AccountEvent in [
            .registered(.init(email: "ana@example.com", displayName: nil, method: "google")),
            .emailVerified(.init(email: "ana@example.com")),
            .sessionStarted(
                .init(
                    sessionID: session, method: "passkey", device: "laptop", accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
            .passkeyRegistered(newPasskey(owners)), .passkeyRegistered(newPasskey(thiefs, credential: "dGhpZWY")),
        ] { state = evolve(state, event, at: now) }
        let later = now.addingTimeInterval(30 * 86_400)
        #expect(state.signInMethods == [.passkey] && state.reauthMethods.contains(.emailLink) && state.passkeyOnlySince == nil)
        #expect(!state.reauthOptions(for: .managePasskeys, now: later).methods.contains(.passkey))
        #expect(throws: IdentityError.reauthRequired) { try removal(of: owners, vouchedBy: thiefs, in: state, at: later) }
        // Passkeys and TOTP: the authenticator app vouches, so a passkey does not.
        let withTOTP = [
            AccountEvent.totpEnrolmentStarted(.init(secret: "s", sessionID: session)),
            .totpEnabled(.init(recoveryCodeHashes: [], sessionID: session)),
        ].reduce(try registered(try registered(account(password: false), newPasskey(owners)), newPasskey(thiefs, credential: "dGhpZWY"))) {
            evolve($0, $1, at: now)
        }
        #expect(withTOTP.signInMethods == [.passkey] && withTOTP.passkeyOnlySince == nil)
        #expect(throws: IdentityError.reauthRequired) { try removal(of: owners, vouchedBy: thiefs, in: withTOTP, at: later) }
    }

    @Test("renaming changes only the name, and nothing when it is the same")
    func rename() throws {
        let id = UUID()
        let state = try registered(account(), newPasskey(id))
        #expect(try decide(state, .renamePasskey(passkeyID: id, name: "Passkey"), now: now).isEmpty)
        let events = try decide(state, .renamePasskey(passkeyID: id, name: "YubiKey"), now: now)
        #expect(events.reduce(state) { evolve($0, $1, at: now) }.passkeys[id]?.name == "YubiKey")
        #expect(throws: IdentityError.passkeyNotFound) { try decide(state, .renamePasskey(passkeyID: UUID(), name: "x"), now: now) }
    }

    @Test("a sign-in with a passkey starts a session with no second factor, even with TOTP on")
    func signInSkipsTOTP() throws {
        let id = UUID()
        let state = try registered(
            account([
                .totpEnrolmentStarted(.init(secret: "s")), .totpCodeUsed(.init(step: 1)), .totpEnabled(.init(recoveryCodeHashes: ["x"])),
            ]), newPasskey(id))
        let session = newSession()
        let events = try decide(
            state, .signInWithPasskey(.init(passkeyID: id, signCount: 0, backedUp: true), session: session), now: now)
        #expect(events.contains { if case .sessionStarted(let started) = $0 { started.method == "passkey" } else { false } })
        #expect(!events.contains { if case .mfaChallengeIssued = $0 { true } else { false } })
    }

    @Test("the counter: a non-zero counter must grow, else passkey.suspect and no session; zero on both sides is accepted")
    func counter() throws {
        let id = UUID()
        let counting = try registered(account(), newPasskey(id, signCount: 5))
        let suspect = try decide(
            counting, .signInWithPasskey(.init(passkeyID: id, signCount: 5, backedUp: false), session: newSession()), now: now)
        #expect(suspect == [.passkeySuspect(.init(passkeyID: id, storedSignCount: 5, presentedSignCount: 5))])
        let lower = try decide(
            counting, .signInWithPasskey(.init(passkeyID: id, signCount: 0, backedUp: false), session: newSession()), now: now)
        #expect(lower.count == 1 && lower.allSatisfy { if case .passkeySuspect = $0 { true } else { false } })
        let grown = try decide(
            counting, .signInWithPasskey(.init(passkeyID: id, signCount: 6, backedUp: false), session: newSession()), now: now)
        #expect(grown.reduce(counting) { evolve($0, $1, at: now) }.passkeys[id]?.signCount == 6)

        let synced = try registered(account(), newPasskey(id, signCount: 0))
        let zero = try decide(
            synced, .signInWithPasskey(.init(passkeyID: id, signCount: 0, backedUp: true), session: newSession()), now: now)
        #expect(zero.contains { if case .sessionStarted = $0 { true } else { false } })
    }

    @Test("a deleted account's passkey is invalid_credential; a disabled account's is account_disabled")
    func deletedAndDisabled() throws {
        let id = UUID()
        let state = try registered(account(), newPasskey(id))
        let assertion = AccountCommand.PasskeyAssertion(passkeyID: id, signCount: 0, backedUp: true)
        let deleted = evolve(state, .deletionScheduled(.init(purgeAfter: now, cooldownUntil: now, cooldownKeys: [])), at: now)
        #expect(throws: IdentityError.invalidCredential) {
            try decide(deleted, .signInWithPasskey(assertion, session: newSession()), now: now)
        }
        let disabled = evolve(state, .accountDisabled(.init(reason: "fraud")), at: now)
        #expect(throws: IdentityError.accountDisabled) {
            try decide(disabled, .signInWithPasskey(assertion, session: newSession()), now: now)
        }
    }

    @Test("re-auth by passkey grants the session; an unknown passkey is invalid_credential")
    func reauth() throws {
        let id = UUID()
        let state = try registered(account(), newPasskey(id))
        let grant = AccountCommand.NewGrant(grantID: UUID(), method: .passkey, tokenHash: "p", lifetime: 900)
        let events = try decide(
            state, .grantReauthByPasskey(sessionID: session, grant, .init(passkeyID: id, signCount: 0, backedUp: true)), now: now)
        let after = events.reduce(state) { evolve($0, $1, at: now) }
        #expect(after.reauthGrant(tokenHash: "p", sessionID: session, now: now)?.method == "passkey")
        #expect(throws: IdentityError.invalidCredential) {
            try decide(
                state, .grantReauthByPasskey(sessionID: session, grant, .init(passkeyID: UUID(), signCount: 0, backedUp: true)), now: now)
        }
    }

    @Test("a revert removes the passkeys the change's session added, named once in removed_methods, and keeps the owner's")
    func revert() throws {
        let (owners, intruders) = (UUID(), UUID())
        // The owner's passkey, registered long before; the intruder's, added by the session that
        // then moves the email.
        var state = try registered(account(), newPasskey(owners, credential: "b3duZXI"))
        state = evolve(
            state,
            .passkeyRegistered(
                .init(
                    passkeyID: intruders, credentialID: "aW50cnVkZXI", publicKey: "cHVi", algorithm: -7, signCount: 0, name: "Mine",
                    userHandle: "aGFuZGxl", backupEligible: false, backedUp: false, transports: [], attestationFormat: "none",
                    sessionID: session)), at: now)
        // The owner's own, from another session two days before the change.
        state.passkeys[owners]?.origin = .init(version: 1, sessionID: UUID(), at: now.addingTimeInterval(-2 * 86_400))
        let change = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "c")
        state = evolve(
            state,
            .emailChangeRequested(.init(email: "eve@example.com", linkID: change.linkID, expiresAt: change.expiresAt, sessionID: session)),
            at: now)
        let revertLink = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(604_800), tokenHash: "r")
        state = try decide(state, .confirmEmailChange(linkID: change.linkID, revertLink: revertLink), now: now)
            .reduce(state) { evolve($0, $1, at: now) }
        let events = try decide(state, .revertEmail(linkID: revertLink.linkID, newPasswordHash: "h9"), now: now)
        guard case .emailReverted(let reverted) = events.first else {
            Issue.record("no email.reverted first")
            return
        }
        #expect(reverted.removedMethods == ["passkey"])
        let after = events.reduce(state) { evolve($0, $1, at: now) }
        #expect(after.passkeys[intruders] == nil && after.passkeys[owners] != nil)
        #expect(
            removedMethods([
                .passkeyRemoved(.init(passkeyID: UUID(), reason: .emailReverted)),
                .passkeyRemoved(.init(passkeyID: UUID(), reason: .emailReverted)),
                .phoneRemoved(.init(phone: "+1", reason: .emailReverted)),
            ]) == ["passkey", "phone"])
    }
}
