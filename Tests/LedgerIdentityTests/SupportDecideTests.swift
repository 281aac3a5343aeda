import Foundation
import LedgerIdentity
import Testing

/// The support desk's decisions (docs/support.md): the record first, then the effects; the
/// refusals before anything is recorded.
@Suite("decide: the support desk")
struct SupportDecideTests {
    let now = Date(timeIntervalSince1970: 1_790_000_000)
    let session = UUID()
    let keyID = UUID()

    /// A verified email account with a phone, signed in, with a grant of that session, and the events given.
    func account(_ events: [AccountEvent] = []) -> AccountState {
        let setup: [AccountEvent] = [
            .registered(.init(email: "ana@example.com", displayName: nil, method: "email")),
            .passwordSet(.init(passwordHash: "h", reason: .signup)), .emailVerified(.init(email: "ana@example.com")),
            .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
            .sessionStarted(
                .init(
                    sessionID: session, method: "email", device: "iPhone", accessTokenHash: "a", refreshTokenHash: "r",
                    accessExpiresAt: now.addingTimeInterval(900), refreshExpiresAt: now.addingTimeInterval(9000))),
            .reauthGranted(
                .init(grantID: UUID(), sessionID: session, method: "password", tokenHash: "g", expiresAt: now.addingTimeInterval(900))),
        ]
        return (setup + events).reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
    }

    func support(_ action: SupportAction, _ state: AccountState) throws -> [AccountEvent] {
        try decide(state, .support(.init(actor: SupportActor(keyID: keyID, operatorName: "Nino"), action: action)), now: now)
    }

    func record(_ events: [AccountEvent]) -> (AccountEvent.AdminRecord.Action, AccountEvent.AdminRecord)? {
        if case .admin(let action, let record) = events.first { return (action, record) }
        return nil
    }

    @Test("a look is recorded and changes nothing, on a purged account too; an account that never was is no_account")
    func views() throws {
        let state = account()
        let viewed = try support(.view(.summary), state)
        #expect(viewed.count == 1 && record(viewed)?.0 == .viewed && record(viewed)?.1.view == .summary)
        #expect(record(viewed)?.1.keyID == keyID && record(viewed)?.1.operatorName == "Nino" && record(viewed)?.1.reason == nil)
        #expect(evolve(state, viewed[0], at: now).sessions == state.sessions)
        var purged = AccountState(accountID: state.accountID)
        purged = evolve(purged, .purged(.init(deletedAt: now)), at: now)
        #expect(try support(.view(.search), purged).count == 1)
        #expect(throws: IdentityError(.noAccount, "No account found.")) { try support(.view(.summary), AccountState(accountID: UUID())) }
        #expect(throws: IdentityError.accountDeleted) { try support(.signOut(reason: "x"), purged) }
    }

    @Test("sign-out: the record, then every session and grant revoked, with support's reason")
    func signOut() throws {
        let events = try support(.signOut(reason: "lost phone"), account())
        #expect(record(events)?.0 == .signedOut && record(events)?.1.reason == "lost phone")
        guard case .sessionRevoked(let revoked) = events[1], case .reauthGrantsRevoked(let grants) = events[2] else {
            Issue.record("\(events)")
            return
        }
        #expect(revoked.reason == "signed_out_by_support" && grants.grantIDs.count == 1 && events.count == 3)
    }

    @Test("a reset link only to a verified address, within the link limits")
    func passwordReset() throws {
        let link = AccountCommand.NewLink(linkID: UUID(), expiresAt: now.addingTimeInterval(1800), tokenHash: "t")
        let events = try support(.sendPasswordReset(link, reason: "forgot"), account())
        #expect(record(events)?.0 == .passwordResetSent && events.count == 2)
        let unverified = [AccountEvent.registered(.init(email: "bea@example.com", displayName: nil, method: "email"))]
            .reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        #expect(throws: IdentityError(.noVerifiedEmail, "This account has no verified email to send a reset link to.")) {
            try support(.sendPasswordReset(link, reason: "forgot"), unverified)
        }
    }

    @Test("removing a method: never the last, the owner's own removal notices suppressed by the reason")
    func removals() throws {
        let state = account()
        let phone = try support(.removeMethod(.phone, reason: "lost"), state)
        #expect(record(phone)?.1.method == "phone")
        guard case .phoneRemoved(let removed) = phone[1] else {
            Issue.record("\(phone)")
            return
        }
        #expect(removed.reason == .support && removed.reason?.sendsRemovalNotice == false)
        let phoneless = phone.reduce(state) { evolve($0, $1, at: now) }
        #expect(throws: IdentityError.self) { try support(.removeMethod(.password, reason: "x"), phoneless) }
        #expect(throws: IdentityError.self) { try support(.removeMethod(.apple, reason: "x"), state) }
        let email = try support(.removeMethod(.password, reason: "typo address"), state)
        #expect(record(email)?.1.method == "email")
        guard case .emailRemoved(let emailRemoved) = email[1] else {
            Issue.record("\(email)")
            return
        }
        #expect(emailRemoved.revertLinkID == nil && emailRemoved.passwordRemoved && emailRemoved.reason == .support)
    }

    @Test("a removal leaves a way in: another method, or a verified address to reset a password by")
    func wayInLeft() throws {
        // Imported without a password: a verified address and a phone.
        let imported = [
            AccountEvent.registered(.init(email: "ana@example.com", displayName: nil, method: "email")),
            .emailVerified(.init(email: "ana@example.com")), .phoneLinked(.init(phone: "+995511200300", region: "GE", requestID: nil)),
        ].reduce(AccountState(accountID: UUID())) { evolve($0, $1, at: now) }
        let phoneGone = try support(.removeMethod(.phone, reason: "lost"), imported).reduce(imported) { evolve($0, $1, at: now) }
        #expect(phoneGone.phone == nil && phoneGone.email == "ana@example.com")
        #expect(throws: IdentityError(.lastMethod, "This is the account's only sign-in method.")) {
            try support(.removeMethod(.password, reason: "x"), phoneGone)
        }
    }

    @Test("a two-factor reset turns TOTP off and ends every session; disable and enable reuse the operator's decisions")
    func twoFactorDisableEnable() throws {
        let withTOTP = account([
            .totpEnrolmentStarted(.init(secret: "JBSWY3DPEHPK3PXP", sessionID: session)),
            .totpEnabled(.init(recoveryCodeHashes: ["c1"], sessionID: session)),
        ])
        let reset = try support(.resetTwoFactor(reason: "lost authenticator"), withTOTP)
        let after = reset.reduce(withTOTP) { evolve($0, $1, at: now) }
        #expect(!after.isTOTPEnabled && after.recoveryCodeHashes.isEmpty && after.sessions.values.allSatisfy { !$0.isActive })
        #expect(!twoFactorTurnedOff([]) && twoFactorTurnedOff(reset))
        #expect(throws: IdentityError.mfaNotEnabled) { try support(.resetTwoFactor(reason: "x"), account()) }
        let pending = account([.totpEnrolmentStarted(.init(secret: "JBSWY3DPEHPK3PXP", sessionID: session))])
        #expect(throws: IdentityError.mfaNotEnabled) { try support(.resetTwoFactor(reason: "x"), pending) }

        let disabled = try support(.disable(reason: "fraud"), account())
        #expect(record(disabled)?.0 == .disabled && disabled.contains { if case .accountDisabled = $0 { true } else { false } })
        let off = disabled.reduce(account()) { evolve($0, $1, at: now) }
        // Again: recorded, nothing else.
        #expect(try support(.disable(reason: "fraud"), off).count == 1)
        let enabled = try support(.enable(reason: "resolved"), off)
        #expect(record(enabled)?.0 == .enabled && enabled.count == 2)
    }

    @Test("a deleted account changes no more, but may be looked at")
    func deleted() throws {
        let deleted = account([.deletionScheduled(.init(purgeAfter: now.addingTimeInterval(86400), cooldownUntil: now, cooldownKeys: []))])
        #expect(try support(.view(.sessions), deleted).count == 1)
        #expect(throws: IdentityError.accountDeleted) { try support(.disable(reason: "x"), deleted) }
    }
}
