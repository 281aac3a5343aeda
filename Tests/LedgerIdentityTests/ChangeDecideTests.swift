import Foundation
import LedgerIdentity
import Testing

@Suite("decide: password and email changes")
struct ChangeDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let current = UUID()
    let other = UUID()

    func account() throws -> AccountState {
        var state = AccountState(accountID: UUID())
        let events: [AccountEvent] =
            [
                .registered(.init(email: "ana@example.com", displayName: nil, method: "email")),
                .passwordSet(.init(passwordHash: "h0", reason: .signup)),
                .emailVerified(.init(email: "ana@example.com")),
                .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
            ]
            + [current, other].map {
                .sessionStarted(
                    .init(
                        sessionID: $0, method: "email", device: nil, accessTokenHash: "a\($0)", refreshTokenHash: "r\($0)",
                        accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000)))
            } + [
                .reauthGranted(
                    .init(grantID: UUID(), sessionID: current, method: "phone", tokenHash: "g", expiresAt: now.addingTimeInterval(900)))
            ]
        for event in events { state = evolve(state, event, at: now) }
        return state
    }

    func fold(_ state: AccountState, _ events: [AccountEvent]) -> AccountState {
        events.reduce(state) { evolve($0, $1, at: now) }
    }

    @Test("a password change needs the grant and revokes exactly the other sessions")
    func passwordChange() throws {
        let state = try account()
        #expect(throws: IdentityError.reauthRequired) {
            try decide(state, .changePassword(newPasswordHash: "h1", sessionID: current, reauthTokenHash: nil), now: now)
        }
        let events = try decide(state, .changePassword(newPasswordHash: "h1", sessionID: current, reauthTokenHash: "g"), now: now)
        #expect(
            Array(events.prefix(2)) == [
                .passwordSet(.init(passwordHash: "h1", reason: .change, sessionID: current)),
                .sessionRevoked(.init(sessionID: other, reason: "password_changed")),
            ])
        #expect(events.dropFirst(2).map(\.type) == ["reauth.grants_revoked"])
        let after = fold(state, events)
        #expect(after.sessions[current]?.isActive == true && after.sessions[other]?.isActive == false)
        #expect(after.reauthGrants.isEmpty)
    }

    /// The account with an attacker's pending email-change link, a reset link, a re-auth link
    /// and the grant of `account()`.
    func accountWithPendingLinks() throws -> (AccountState, change: UUID, reset: UUID, reauth: UUID) {
        let (change, reset, reauth) = (UUID(), UUID(), UUID())
        let state = fold(
            try account(),
            [
                .emailChangeRequested(
                    .init(email: "eve@example.com", linkID: change, expiresAt: now.addingTimeInterval(1800), sessionID: current)),
                .passwordResetRequested(.init(email: "ana@example.com", linkID: reset, expiresAt: now.addingTimeInterval(1800))),
                .reauthLinkSent(
                    .init(email: "ana@example.com", linkID: reauth, expiresAt: now.addingTimeInterval(1800), sessionID: current)),
            ])
        return (state, change, reset, reauth)
    }

    @Test("recovery wins: a reset, a password change and a revert end every pending link and grant, in events")
    func recoveryWins() throws {
        let (state, change, reset, reauth) = try accountWithPendingLinks()
        let grantID = try #require(state.reauthGrants.keys.first)
        let afterReset = try decide(state, .resetPassword(linkID: reset, newPasswordHash: "h9"), now: now)
        #expect(
            afterReset.contains(
                .emailLinksRevoked(.init(linkIDs: [change, reauth].sorted { $0.uuidString < $1.uuidString }, reason: "password_reset"))))
        #expect(afterReset.contains(.reauthGrantsRevoked(.init(grantIDs: [grantID], reason: "password_reset"))))
        let reset1 = fold(state, afterReset)
        #expect(reset1.pendingLinks.isEmpty && reset1.reauthGrants.isEmpty)
        // The attacker's change link no longer moves the email.
        #expect(throws: IdentityError.linkExpired) {
            try decide(reset1, .confirmEmailChange(linkID: change, revertLink: .init(linkID: UUID(), expiresAt: now)), now: now)
        }
        #expect(throws: IdentityError.linkExpired) {
            try decide(
                reset1, .confirmReauthLink(linkID: reauth, .init(grantID: UUID(), method: .emailLink, tokenHash: "x", lifetime: 900)),
                now: now)
        }
        let changed = fold(
            state, try decide(state, .changePassword(newPasswordHash: "h2", sessionID: current, reauthTokenHash: "g"), now: now))
        #expect(changed.pendingLinks.isEmpty && changed.reauthGrants.isEmpty)
        // A revert (after the email moved) ends the rest too.
        let confirmed = fold(
            state,
            try decide(
                state, .confirmEmailChange(linkID: change, revertLink: .init(linkID: UUID(), expiresAt: now.addingTimeInterval(604_800))),
                now: now))
        let revertID = try #require(confirmed.pendingLinks.values.first { $0.purpose == .emailRevert }?.id)
        let reverted = fold(confirmed, try decide(confirmed, .revertEmail(linkID: revertID, newPasswordHash: "h-back"), now: now))
        #expect(reverted.pendingLinks.isEmpty && reverted.reauthGrants.isEmpty && reverted.email == "ana@example.com")
        #expect(reverted.sessions.values.allSatisfy { !$0.isActive })
    }

    @Test("the previous owner's revert link outlives a reset or change by whoever moved the email, and reverting a later change")
    func revertLinksSurvive() throws {
        // ana@ → eve@ (revert link to ana@), then eve@ → mallory@ (revert link to eve@).
        func change(_ state: AccountState, to email: String, at time: Date) throws -> AccountState {
            let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: time.addingTimeInterval(1800), tokenHash: "t")
            let requested = fold(
                state,
                try decide(
                    state, .requestEmailChange(try #require(EmailAddress(email)), link: link, sessionID: current, reauthTokenHash: "g"),
                    now: time))
            return fold(
                requested,
                try decide(
                    requested,
                    .confirmEmailChange(
                        linkID: link.linkID, revertLink: .init(linkID: UUID(), expiresAt: time.addingTimeInterval(604_800))),
                    now: time))
        }
        let once = try change(try account(), to: "eve@example.com", at: now)
        let toAna = try #require(once.pendingLinks.values.first { $0.purpose == .emailRevert }?.id)
        let twice = try change(once, to: "mallory@example.com", at: now.addingTimeInterval(60))
        let toEve = try #require(twice.pendingLinks.values.first { $0.purpose == .emailRevert && $0.id != toAna }?.id)
        // The password changed or reset by the attacker: ana's way back stays.
        let changed = fold(
            twice, try decide(twice, .changePassword(newPasswordHash: "h2", sessionID: current, reauthTokenHash: "g"), now: now))
        #expect(changed.pendingLinks[toAna] != nil)
        // Reverting the later change (the attacker's own mailbox got that link) keeps ana's.
        let backToEve = fold(changed, try decide(changed, .revertEmail(linkID: toEve, newPasswordHash: "h-back"), now: now))
        #expect(backToEve.email == "eve@example.com" && backToEve.pendingLinks[toAna] != nil)
        let backToAna = fold(backToEve, try decide(backToEve, .revertEmail(linkID: toAna, newPasswordHash: "h-back"), now: now))
        #expect(backToAna.email == "ana@example.com")
        // Reverting the earlier change ends the later one's link: it cannot undo the recovery.
        let straightBack = fold(twice, try decide(twice, .revertEmail(linkID: toAna, newPasswordHash: "h-back"), now: now))
        #expect(straightBack.email == "ana@example.com" && straightBack.pendingLinks[toEve] == nil)
        // Deletion ends them all.
        let deleted = fold(
            twice,
            try decide(
                twice, .deleteAccount(sessionID: current, reauthTokenHash: "g", purgeDelay: 1, cooldown: 1, cooldownKeys: []), now: now))
        #expect(deleted.pendingLinks.isEmpty)
    }

    @Test("re-auth nonces are counted per session: a stolen session filling its slots leaves the owner's session its own")
    func noncesPerSession() throws {
        var state = try account()
        for _ in 0..<Policies.standard.reauthNonceLimit {
            state = fold(
                state,
                try decide(state, .issueReauthNonce(sessionID: other, .init(nonceID: UUID(), nonceHash: "n", lifetime: 300)), now: now))
        }
        #expect(throws: IdentityError.self) {
            try decide(state, .issueReauthNonce(sessionID: other, .init(nonceID: UUID(), nonceHash: "n", lifetime: 300)), now: now)
        }
        #expect(
            try decide(state, .issueReauthNonce(sessionID: current, .init(nonceID: UUID(), nonceHash: "n", lifetime: 300)), now: now).count
                == 1)
    }

    @Test("deletion ends every pending link and grant; a deleted account's links are expired")
    func deletionEndsLinks() throws {
        let (state, change, reset, reauth) = try accountWithPendingLinks()
        let verify = UUID()
        let withVerify = fold(
            state, [.emailVerificationSent(.init(email: "ana@example.com", linkID: verify, expiresAt: now.addingTimeInterval(1800)))])
        let events = try decide(
            withVerify, .deleteAccount(sessionID: current, reauthTokenHash: "g", purgeDelay: 1, cooldown: 1, cooldownKeys: []), now: now)
        #expect(events.map(\.type).suffix(2) == ["email.links_revoked", "reauth.grants_revoked"])
        let deleted = fold(withVerify, events)
        #expect(deleted.pendingLinks.isEmpty && deleted.reauthGrants.isEmpty)
        // Even a link the state still held would not work on a deleted account.
        let stale = fold(withVerify, [events[0]])
        #expect(throws: IdentityError.linkExpired) { try decide(stale, .confirmVerificationLink(linkID: verify), now: now) }
        #expect(throws: IdentityError.linkExpired) {
            try decide(stale, .confirmEmailChange(linkID: change, revertLink: .init(linkID: UUID(), expiresAt: now)), now: now)
        }
        #expect(throws: IdentityError.linkExpired) { try decide(stale, .resetPassword(linkID: reset, newPasswordHash: "h"), now: now) }
    }

    @Test("holds belong to the key that placed them: another key neither overwrites nor releases them")
    func holdOwnership() throws {
        let state = try account()
        let held = fold(state, try decide(state, .placeHold(Hold(ref: "b1", kind: .upcomingBooking, keyID: "key-a")), now: now))
        #expect(throws: IdentityError.holdNotFound) { try decide(held, .releaseHold(ref: "b1", keyID: "key-b"), now: now) }
        #expect(throws: IdentityError.holdNotFound) {
            try decide(held, .placeHold(Hold(ref: "b1", kind: .dispute, keyID: "key-b")), now: now)
        }
        #expect(try decide(held, .placeHold(Hold(ref: "b1", kind: .upcomingBooking, keyID: "key-a")), now: now).isEmpty)
        #expect(try decide(held, .releaseHold(ref: "b1", keyID: "key-a"), now: now) == [.holdReleased(.init(ref: "b1", keyID: "key-a"))])
        #expect(try decide(held, .releaseHold(ref: "unknown", keyID: "key-b"), now: now).isEmpty)
        // An administrator's key clears a hold whose key was revoked; the event names it.
        #expect(
            try decide(held, .releaseHold(ref: "b1", keyID: "root", administrator: true), now: now)
                == [.holdReleased(.init(ref: "b1", keyID: "root"))])
    }

    @Test("every failed sign-in is an event; the one that reaches the limit also records the lockout")
    func loginFailures() throws {
        let state = try account()
        #expect(try decide(state, .recordLoginFailure(failures: 2, lockedUntil: nil), now: now) == [.loginFailed(.init(failures: 2))])
        let until = now.addingTimeInterval(900)
        #expect(
            try decide(state, .recordLoginFailure(failures: 5, lockedUntil: until), now: now)
                == [.loginFailed(.init(failures: 5)), .loginThrottled(.init(until: until))])
    }

    @Test("an email change applies only through its link, and the revert link restores the address and ends every session")
    func emailChange() throws {
        let state = try account()
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "t")
        let requested = fold(
            state,
            try decide(
                state, .requestEmailChange(EmailAddress("new@example.com")!, link: link, sessionID: current, reauthTokenHash: "g"), now: now
            ))
        #expect(requested.email == "ana@example.com")
        let revert = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(604_800), tokenHash: "r")
        #expect(throws: IdentityError.linkExpired) {
            try decide(requested, .confirmEmailChange(linkID: link.linkID, revertLink: revert), now: now.addingTimeInterval(1800))
        }
        let changed = fold(requested, try decide(requested, .confirmEmailChange(linkID: link.linkID, revertLink: revert), now: now))
        #expect(changed.email == "new@example.com" && changed.emailVerified)
        #expect(throws: IdentityError.linkExpired) {
            try decide(changed, .confirmEmailChange(linkID: link.linkID, revertLink: revert), now: now)
        }
        let reverted = fold(
            changed,
            try decide(changed, .revertEmail(linkID: revert.linkID, newPasswordHash: "h-back"), now: now.addingTimeInterval(604_799)))
        #expect(reverted.email == "ana@example.com")
        #expect(reverted.sessions.values.allSatisfy { !$0.isActive })
        #expect(throws: IdentityError.linkExpired) {
            try decide(reverted, .revertEmail(linkID: revert.linkID, newPasswordHash: "h-back"), now: now)
        }
    }

    @Test("a new email-change request ends the earlier change links: a mistyped address corrected cannot be confirmed")
    func emailChangeSuperseded() throws {
        let state = try account()
        let mistyped = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "t1")
        let first = try decide(
            state, .requestEmailChange(EmailAddress("an@example.com")!, link: mistyped, sessionID: current, reauthTokenHash: "g"), now: now)
        #expect(first.map(\.type) == ["email.change_requested"])
        let corrected = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1860), tokenHash: "t2")
        let later = now.addingTimeInterval(60)
        let second = try decide(
            fold(state, first),
            .requestEmailChange(EmailAddress("ana.new@example.com")!, link: corrected, sessionID: current, reauthTokenHash: "g"),
            now: later)
        #expect(second.first == .emailLinksRevoked(.init(linkIDs: [mistyped.linkID], reason: "superseded")))
        #expect(second.dropFirst().map(\.type) == ["email.change_requested"])
        let after = fold(fold(state, first), second)
        let revert = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(604_800), tokenHash: "r")
        #expect(throws: IdentityError.linkExpired) {
            try decide(after, .confirmEmailChange(linkID: mistyped.linkID, revertLink: revert), now: later)
        }
        let changed = fold(after, try decide(after, .confirmEmailChange(linkID: corrected.linkID, revertLink: revert), now: later))
        #expect(changed.email == "ana.new@example.com")
    }

    @Test("email and password go only to an account without an email, and only once the address's link proves it")
    func addEmail() throws {
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800))
        let add = AccountCommand.addEmailAndPassword(
            EmailAddress("b@example.com")!, passwordHash: "h", link: link, sessionID: current, reauthTokenHash: "g")
        #expect(throws: IdentityError.self) { try decide(try account(), add, now: now) }
        var phoneOnly = AccountState(accountID: UUID())
        for event: AccountEvent in [
            .registered(.init(email: nil, displayName: nil, method: "phone")),
            .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
            .sessionStarted(
                .init(
                    sessionID: current, method: "phone", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
        ] { phoneOnly = evolve(phoneOnly, event, at: now) }
        // A session alone does not add a way in.
        #expect(throws: IdentityError.reauthRequired) { try decide(phoneOnly, add, now: now) }
        let granted = evolve(
            phoneOnly,
            .reauthGranted(
                .init(
                    grantID: UUID(), sessionID: current, method: "phone", tokenHash: "g", expiresAt: now.addingTimeInterval(900))), at: now)
        let requested = fold(granted, try decide(granted, add, now: now))
        // Nothing is claimed meanwhile: the address waits, with its password.
        #expect(requested.email == nil && !requested.hasPassword && requested.pendingEmail?.email == "b@example.com")
        #expect(requested.signInMethods == [.phone])
        // A link past its time proves nothing.
        #expect(throws: IdentityError.linkExpired) {
            try decide(requested, .confirmEmailAdd(linkID: link.linkID), now: now.addingTimeInterval(1800))
        }
        let after = fold(requested, try decide(requested, .confirmEmailAdd(linkID: link.linkID), now: now))
        #expect(after.email == "b@example.com" && after.hasPassword && after.emailVerified && after.signInMethods == [.phone, .password])
        #expect(after.pendingEmail == nil)
        #expect(throws: IdentityError.linkExpired) { try decide(after, .confirmEmailAdd(linkID: link.linkID), now: now) }
    }

    @Test("deletion: never without a grant, blocked by holds, then every session ends and nothing more is accepted")
    func deletion() throws {
        let state = try account()
        let delete = AccountCommand.deleteAccount(
            sessionID: current, reauthTokenHash: "g", purgeDelay: 2_592_000, cooldown: 604_800, cooldownKeys: ["k"])
        #expect(throws: IdentityError.reauthRequired) {
            try decide(
                state, .deleteAccount(sessionID: current, reauthTokenHash: nil, purgeDelay: 1, cooldown: 1, cooldownKeys: []), now: now)
        }
        let held = fold(state, try decide(state, .placeHold(Hold(ref: "p", kind: .pendingPayout)), now: now))
        #expect(throws: DeletionBlocked.self) { try decide(held, delete, now: now) }
        let deleted = fold(state, try decide(state, delete, now: now))
        #expect(deleted.isDeleted && deleted.purgeAfter == now.addingTimeInterval(2_592_000))
        #expect(deleted.sessions.values.allSatisfy { !$0.isActive })
        #expect(throws: IdentityError.accountDeleted) { try decide(deleted, .placeHold(Hold(ref: "p", kind: .dispute)), now: now) }
        #expect(throws: IdentityError.self) { try decide(deleted, delete, now: now) }
    }

    @Test("a revert removes what was added after the change, by its session before it, or by any session the day before; the rest stays")
    func revertUndoesTheSpan() throws {
        let (intruder, second) = (UUID(), UUID())
        // The owner's account (verified, a password, the phone), Apple added by the owner's
        // session `current` two days before; then, in the day before the change, the intruder
        // links Google from the session that will move the email, and Microsoft-like extras
        // from a second session (here: the phone changed to theirs).
        var state = try account()
        state = evolve(
            state, .providerLinked(.init(provider: .apple, subject: "a-1", email: nil, emailVerified: false, sessionID: current)),
            at: now.addingTimeInterval(-2 * 86_400))
        state = fold(
            state,
            [intruder, second].map {
                .sessionStarted(
                    .init(
                        sessionID: $0, method: "email", device: nil, accessTokenHash: "a\($0)", refreshTokenHash: "r\($0)",
                        accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000)))
            } + [
                .providerLinked(.init(provider: .google, subject: "g-1", email: nil, emailVerified: false, sessionID: intruder)),
                .phoneChanged(
                    .init(phone: "+995511200399", region: "GE", previousPhone: "+995511200300", requestID: nil, sessionID: second)),
            ])
        let change = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "c")
        state = fold(
            state,
            [
                .emailChangeRequested(
                    .init(email: "eve@example.com", linkID: change.linkID, expiresAt: change.expiresAt, sessionID: intruder))
            ])
        let revert = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(604_800), tokenHash: "r")
        state = fold(state, try decide(state, .confirmEmailChange(linkID: change.linkID, revertLink: revert), now: now))
        // After the change: TOTP on by some session.
        state = fold(
            state,
            [
                .totpEnrolmentStarted(.init(secret: "s", sessionID: current)), .totpEnabled(.init(recoveryCodeHashes: [])),
            ])
        #expect(throws: IdentityError.self) { try decide(state, .revertEmail(linkID: revert.linkID, newPasswordHash: nil), now: now) }
        let events = try decide(state, .revertEmail(linkID: revert.linkID, newPasswordHash: "h9"), now: now)
        guard case .emailReverted(let reverted) = events.first else {
            Issue.record("no email.reverted first")
            return
        }
        #expect(reverted.removedMethods == ["phone", "google"] && reverted.twoFactorReset)
        let after = fold(state, events)
        #expect(after.email == "ana@example.com" && after.emailVerified && after.passwordHash == "h9")
        // Apple, added by the owner's session long before the change, stays.
        #expect(after.phone == nil && after.providerSubjects[.apple] == "a-1" && after.providerSubjects[.google] == nil)
        #expect(!after.isTOTPEnabled && after.sessions.values.allSatisfy { !$0.isActive } && after.reauthGrants.isEmpty)
    }

    /// The account with its email moved to eve@ by the session `other`; the revert link's id.
    func moved(_ state: AccountState, revertLifetime: TimeInterval = 604_800, to email: String = "eve@example.com", at time: Date)
        throws -> (AccountState, revert: UUID)
    {
        let change = AccountCommand.NewLink(linkID: UUID(), expiresAt: time.addingTimeInterval(1800), tokenHash: "c")
        var state = fold(
            state, [.emailChangeRequested(.init(email: email, linkID: change.linkID, expiresAt: change.expiresAt, sessionID: other))])
        let revert = AccountCommand.NewLink(linkID: UUID(), expiresAt: time.addingTimeInterval(revertLifetime), tokenHash: "r")
        state = try decide(state, .confirmEmailChange(linkID: change.linkID, revertLink: revert), now: time).reduce(state) {
            evolve($0, $1, at: time)
        }
        return (state, revert.linkID)
    }

    @Test("a revert asks for a new password whenever the account has one, also one set after the change it undoes")
    func revertPasswordSetInSpan() throws {
        // An account whose address Google vouched for, without a password.
        var state = AccountState(accountID: UUID())
        for event: AccountEvent in [
            .registered(.init(email: "ana@example.com", displayName: nil, method: "google")),
            .emailVerified(.init(email: "ana@example.com")),
            .sessionStarted(
                .init(
                    sessionID: other, method: "google", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
        ] { state = evolve(state, event, at: now) }
        let (changed, revert) = try moved(state, at: now)
        #expect(try decide(changed, .revertEmail(linkID: revert, newPasswordHash: nil), now: now).first?.type == "email.reverted")
        // The intruder set a password after the change: the revert must replace it.
        let withPassword = evolve(changed, .passwordSet(.init(passwordHash: "intruders", reason: .add, sessionID: other)), at: now)
        #expect(throws: IdentityError.self) { try decide(withPassword, .revertEmail(linkID: revert, newPasswordHash: nil), now: now) }
        let after = fold(withPassword, try decide(withPassword, .revertEmail(linkID: revert, newPasswordHash: "owners"), now: now))
        #expect(after.passwordHash == "owners")
    }

    @Test("reverting an earlier change ends the later changes' revert links by their order, whatever their expiry says")
    func revertOrder() throws {
        // ana@ → eve@ (a 7-day link to ana@), then eve@ → mallory@ with a shorter link (the
        // operator shortened LEDGER_EMAIL_REVERT_TTL_SECONDS in between).
        let (once, toAna) = try moved(try account(), at: now)
        let (twice, toEve) = try moved(once, revertLifetime: 86_400, to: "mallory@example.com", at: now.addingTimeInterval(60))
        let events = try decide(twice, .revertEmail(linkID: toAna, newPasswordHash: "h"), now: now.addingTimeInterval(120))
        guard case .emailReverted(let reverted) = events.first else {
            Issue.record("no email.reverted")
            return
        }
        #expect(reverted.endedRevertLinkIDs == [toEve])
        let after = fold(twice, events)
        #expect(after.email == "ana@example.com" && after.pendingLinks[toEve] == nil)
        #expect(throws: IdentityError.linkExpired) { try decide(after, .revertEmail(linkID: toEve, newPasswordHash: "h"), now: now) }
    }

    @Test("recovery codes replaced after the change turn TOTP off at the revert; a reset or revert forgets the known devices")
    func revertRecoveryCodesAndDevices() throws {
        // TOTP on since three days before the change (outside the day the revert reaches back).
        var state = try account()
        for event: AccountEvent in [
            .totpEnrolmentStarted(.init(secret: "s", sessionID: current)),
            .totpEnabled(.init(recoveryCodeHashes: ["c1"], sessionID: current)),
        ] { state = evolve(state, event, at: now.addingTimeInterval(-3 * 86_400)) }
        state = evolve(
            state,
            .sessionStarted(
                .init(
                    sessionID: UUID(), method: "email", device: nil, accessTokenHash: "ad", refreshTokenHash: "rd",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000), deviceID: UUID())),
            at: now.addingTimeInterval(-3 * 86_400))
        let (changed, revert) = try moved(state, at: now)
        #expect(!changed.knownDevices.isEmpty)
        let untouched = try decide(changed, .revertEmail(linkID: revert, newPasswordHash: "h"), now: now)
        #expect(!untouched.contains { $0.kind == .totpDisabled })
        #expect(fold(changed, untouched).knownDevices.isEmpty)
        let regenerated = evolve(changed, .recoveryCodesRegenerated(.init(recoveryCodeHashes: ["intruders"])), at: now)
        let events = try decide(regenerated, .revertEmail(linkID: revert, newPasswordHash: "h"), now: now)
        #expect(events.contains { $0.kind == .totpDisabled })
    }

    /// Whether the revert of a change made by the session `other` at `now` turns TOTP off, when
    /// `history` (each event at its own offset from `now`) came before the change and `after` after it.
    func revertResetsTwoFactor(
        history: [(AccountEvent, TimeInterval)], after: [AccountEvent] = []
    ) throws -> Bool {
        var state = try account()
        for (event, offset) in history { state = evolve(state, event, at: now.addingTimeInterval(offset)) }
        var (changed, revert) = try moved(state, at: now)
        changed = after.reduce(changed) { evolve($0, $1, at: now.addingTimeInterval(60)) }
        let events = try decide(changed, .revertEmail(linkID: revert, newPasswordHash: "h"), now: now.addingTimeInterval(120))
        guard case .emailReverted(let reverted) = events.first else { throw IdentityError(.linkExpired, "no email.reverted") }
        let disabled = events.contains { $0.kind == .totpDisabled }
        #expect(disabled == reverted.twoFactorReset)
        #expect(changed.isTOTPEnabled && fold(changed, events).isTOTPEnabled == !disabled)
        return disabled
    }

    @Test("a revert turns off TOTP enrolled, or recovery codes replaced, by any session in the day before the change; older ones stay")
    func revertTwoFactorSpan() throws {
        let (intruder, owner) = (UUID(), UUID())
        let hour: TimeInterval = 3600
        func enabled(by session: UUID, _ offset: TimeInterval) -> [(AccountEvent, TimeInterval)] {
            [
                (.totpEnrolmentStarted(.init(secret: "s", sessionID: session)), offset),
                (.totpEnabled(.init(recoveryCodeHashes: ["c"], sessionID: session)), offset),
            ]
        }
        func codes(by session: UUID?, _ offset: TimeInterval) -> (AccountEvent, TimeInterval) {
            (.recoveryCodesRegenerated(.init(recoveryCodeHashes: ["n"], sessionID: session)), offset)
        }
        // A second session (the phished password) turned TOTP on hours before the stolen one moved the email.
        #expect(try revertResetsTwoFactor(history: enabled(by: intruder, -2 * hour)))
        // The owner's own TOTP, on for a month: kept.
        #expect(try !revertResetsTwoFactor(history: enabled(by: owner, -30 * 86_400)))
        // Enrolled two days before by another session: outside the day, kept.
        #expect(try !revertResetsTwoFactor(history: enabled(by: intruder, -2 * 86_400)))
        // TOTP on for months; new codes taken by the session that then changes the email, even a
        // month before the change, or by any session within the day before, or after: reset.
        #expect(try revertResetsTwoFactor(history: enabled(by: owner, -90 * 86_400) + [codes(by: other, -30 * 86_400)]))
        #expect(try revertResetsTwoFactor(history: enabled(by: owner, -90 * 86_400) + [codes(by: intruder, -20 * hour)]))
        #expect(
            try revertResetsTwoFactor(
                history: enabled(by: owner, -90 * 86_400),
                after: [.recoveryCodesRegenerated(.init(recoveryCodeHashes: ["n"], sessionID: owner))]))
        // New codes another session took more than a day before: kept.
        #expect(try !revertResetsTwoFactor(history: enabled(by: owner, -90 * 86_400) + [codes(by: intruder, -25 * hour)]))
        // Codes from events written before the session was recorded: only the version rule applies.
        #expect(try !revertResetsTwoFactor(history: enabled(by: owner, -90 * 86_400) + [codes(by: nil, -2 * hour)]))
    }

    @Test("a session the revert ended cannot confirm the enrolment it began; the revert drops it without calling it a reset")
    func pendingEnrolmentAtRevert() throws {
        // `current` (the intruder's second session) begins an enrolment; `other` moves the email.
        var state = try account()
        state = fold(state, try decide(state, .startTOTPEnrolment(secret: "s", sessionID: current, reauthTokenHash: "g"), now: now))
        let (changed, revert) = try moved(state, at: now)
        let events = try decide(changed, .revertEmail(linkID: revert, newPasswordHash: "h"), now: now)
        guard case .emailReverted(let reverted) = events.first else { throw IdentityError(.linkExpired, "no email.reverted") }
        // Dropped, but two-step verification was never on: the answer does not say it was reset.
        #expect(!reverted.twoFactorReset && events.contains(.totpDisabled(.init(reason: "email_reverted", pending: true))))
        let after = fold(changed, events)
        #expect(after.totp == nil && after.sessions[current]?.isActive == false)
        #expect(throws: IdentityError.sessionExpired) {
            try decide(after, .confirmTOTP(step: 99, recoveryCodeHashes: ["c"], sessionID: current), now: now)
        }
        // An ended session is refused even with the enrolment still there (a command decided late).
        let ended = fold(changed, revokeAll(changed))
        #expect(throws: IdentityError.sessionExpired) {
            try decide(ended, .confirmTOTP(step: 99, recoveryCodeHashes: ["c"], sessionID: current), now: now)
        }
    }

    @Test("an email-change link ends with the session that asked for it: signing it out stops the change")
    func changeLinkEndsWithItsSession() throws {
        let state = try account()
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "c")
        var asked = state.applying(
            [.emailChangeRequested(.init(email: "eve@example.com", linkID: link.linkID, expiresAt: link.expiresAt, sessionID: other))],
            at: now)
        let revert = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(604_800), tokenHash: "r")
        #expect(try decide(asked, .confirmEmailChange(linkID: link.linkID, revertLink: revert), now: now).first?.type == "email.changed")
        asked = asked.applying([.sessionRevoked(.init(sessionID: other, reason: "signed_out_everywhere"))], at: now)
        #expect(throws: IdentityError.linkExpired) {
            try decide(asked, .confirmEmailChange(linkID: link.linkID, revertLink: revert), now: now)
        }
    }

    /// Every live session of `state` revoked.
    func revokeAll(_ state: AccountState) -> [AccountEvent] {
        state.sessions.values.filter(\.isActive).map { .sessionRevoked(.init(sessionID: $0.id, reason: "test")) }
    }

    @Test("a sign-in starts its session only while the account holds what it checked: the password's hash, the number, the identity")
    func signInProof() throws {
        let state = try account()
        let session = AccountCommand.NewSession(
            sessionID: UUID(), method: "email", device: nil,
            tokens: .init(accessTokenHash: "a9", refreshTokenHash: "r9", accessExpiresAt: now, refreshExpiresAt: now))
        #expect(try !decide(state, .startSession(session, proof: .password(hash: "h0", email: "ANA@example.com")), now: now).isEmpty)
        // A revert, reset or change committed while the old hash was checked; the address moved.
        #expect(throws: IdentityError.invalidCredentials) {
            try decide(state, .startSession(session, proof: .password(hash: "h-old", email: "ana@example.com")), now: now)
        }
        #expect(throws: IdentityError.invalidCredentials) {
            try decide(state, .startSession(session, proof: .password(hash: "h0", email: "eve@example.com")), now: now)
        }
        #expect(try !decide(state, .startSession(session, proof: .phone("+995511200300", issuedAt: now)), now: now).isEmpty)
        #expect(throws: IdentityError.self) {
            try decide(state, .startSession(session, proof: .phone("+995511200399", issuedAt: now)), now: now)
        }
        // A revert ends the codes sent before it, for a number the account keeps too.
        let (changed, revert) = try moved(state, at: now)
        let reverted = changed.applying(try decide(changed, .revertEmail(linkID: revert, newPasswordHash: "h9"), now: now), at: now)
        #expect(reverted.phone == "+995511200300" && reverted.codesEndedAt == now)
        #expect(throws: IdentityError(.codeExpired, "Code expired. Request a new one.")) {
            try decide(reverted, .startSession(session, proof: .phone("+995511200300", issuedAt: now)), now: now.addingTimeInterval(60))
        }
        #expect(
            try !decide(reverted, .startSession(session, proof: .phone("+995511200300", issuedAt: now.addingTimeInterval(1))), now: now)
                .isEmpty)
        #expect(throws: IdentityError.self) {
            try decide(state, .startSession(session, proof: .provider(.google, subject: "g-1")), now: now)
        }
        // A rehash of a password changed meanwhile writes nothing: the old password stays gone.
        #expect(try decide(state, .rehashPassword(replacing: "h-old", newPasswordHash: "h-old-rehashed"), now: now).isEmpty)
    }

    @Test("confirming TOTP and replacing recovery codes record the session, which the fold keeps with the time")
    func twoFactorOrigins() throws {
        var state = try account()
        state = fold(state, try decide(state, .startTOTPEnrolment(secret: "s", sessionID: current, reauthTokenHash: "g"), now: now))
        let confirmed = try decide(state, .confirmTOTP(step: 1, recoveryCodeHashes: ["c"], sessionID: current), now: now)
        #expect(confirmed.contains(.totpEnabled(.init(recoveryCodeHashes: ["c"], sessionID: current))))
        state = fold(state, confirmed)
        #expect(state.totp?.enabledOrigin == .init(version: state.version, sessionID: current, at: now))
        let later = now.addingTimeInterval(60)
        let grant = AccountEvent.reauthGranted(
            .init(grantID: UUID(), sessionID: other, method: "phone", tokenHash: "g2", expiresAt: later.addingTimeInterval(900)))
        state = evolve(state, grant, at: later)
        let regenerated = try decide(state, .regenerateRecoveryCodes(["n"], sessionID: other, reauthTokenHash: "g2"), now: later)
        #expect(regenerated == [.recoveryCodesRegenerated(.init(recoveryCodeHashes: ["n"], sessionID: other))])
        state = regenerated.reduce(state) { evolve($0, $1, at: later) }
        #expect(state.totp?.recoveryCodesOrigin == .init(version: state.version, sessionID: other, at: later))
    }

    @Test("a pending addition ends with the session that asked; a relay address it replaces gets a revert link and is held")
    func pendingAdditionRules() throws {
        var relay = AccountState(accountID: UUID())
        for event: AccountEvent in [
            .registered(.init(email: "x1@privaterelay.appleid.com", displayName: nil, method: "apple")),
            .emailVerified(.init(email: "x1@privaterelay.appleid.com")),
            .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
            .sessionStarted(
                .init(
                    sessionID: current, method: "apple", device: nil, accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
            .reauthGranted(
                .init(grantID: UUID(), sessionID: current, method: "phone", tokenHash: "g", expiresAt: now.addingTimeInterval(900))),
        ] { relay = evolve(relay, event, at: now) }
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "t")
        let requested = fold(
            relay,
            try decide(
                relay,
                .addEmailAndPassword(
                    EmailAddress("ana@example.com")!, passwordHash: "h", link: link, sessionID: current, reauthTokenHash: "g"),
                now: now))
        // Signed out everywhere: the pending addition is over.
        let signedOut = fold(requested, try decide(requested, .revokeSession(sessionID: current, reason: "logout"), now: now))
        #expect(throws: IdentityError.linkExpired) { try decide(signedOut, .confirmEmailAdd(linkID: link.linkID), now: now) }
        // Confirmed while the session lives: a change of the relay address, with its way back.
        let revert = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(604_800), tokenHash: "r")
        let events = try decide(requested, .confirmEmailAdd(linkID: link.linkID, revertLink: revert, previousEmailKey: "k"), now: now)
        guard case .emailChanged(let changed) = events.first else {
            Issue.record("no email.changed")
            return
        }
        #expect(changed.previousEmail == "x1@privaterelay.appleid.com" && changed.previousEmailKey == "k")
        let after = fold(requested, events)
        #expect(after.email == "ana@example.com" && after.hasPassword && after.pendingEmail == nil)
        #expect(after.pendingLinks[revert.linkID]?.purpose == .emailRevert)
    }
}

@Suite("Access ends by reason")
struct AccessEndReasonTests {
    @Test("only deletion ends revert links; the reasons recorded are the events' words")
    func revertLinksEndOnlyWithDeletion() {
        #expect(AccessEndReason.allCases.filter(\.endsRevertLinks) == [.accountDeleted])
        #expect(
            AccessEndReason.allCases.map(\.rawValue) == [
                "password_reset", "password_changed", "email_reverted", "account_disabled", "apple_consent_revoked", "account_deleted",
                "signed_out_by_support", "two_factor_reset_by_support",
            ])
    }
}

extension AccountState {
    /// `events` folded in, each at `time`.
    fileprivate func applying(_ events: [AccountEvent], at time: Date) -> AccountState {
        events.reduce(self) { evolve($0, $1, at: time) }
    }
}
