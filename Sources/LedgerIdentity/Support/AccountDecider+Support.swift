import Foundation

/// `decide` for the support desk (docs/support.md): the `admin.*` record first, naming who
/// acted and why, then the effects the owner's own commands would have had, each with a reason
/// saying support made them (so the owner gets one `changed_by_support` notice, not the
/// notices of their own changes).
func decideSupport(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    guard case .support(let call) = command else { preconditionFailure("decide routes \(command.name) elsewhere") }
    let now = context.now
    var record = AccountEvent.AdminRecord(
        keyID: call.actor.keyID, staffID: call.actor.staffID, operatorName: call.actor.operatorName, reason: call.action.reason)
    if case .view(let view) = call.action {
        // A purged account is still looked at: the record keeps nothing of the person.
        guard state.exists || state.purgedAt != nil else { throw IdentityError(.noAccount, "No account found.") }
        record.view = view
        return [.admin(.viewed, record)]
    }
    try state.requireSupportChangeable()
    let effects: [AccountEvent]
    switch call.action {
    case .view: preconditionFailure("answered above")

    case .signOut:
        effects = revokeSessions(state, reason: AccessEndReason.signedOutBySupport.rawValue, except: nil) + revokeGrants(state, now: now)

    case .sendPasswordReset(let link, _):
        let email = try state.requireVerifiedEmailForSupport()
        try checkLinkRate(state, .passwordReset, context.policies.linkResend, now: now)
        effects = [.passwordResetRequested(.init(email: email, linkID: link.linkID, expiresAt: link.expiresAt, tokenHash: link.tokenHash))]

    case .resetTwoFactor:
        // A pending enrolment is the person's own to finish or drop: only two-factor that is on is reset.
        guard state.isTOTPEnabled else { throw IdentityError.mfaNotEnabled }
        effects =
            [.totpDisabled(.init(reason: MethodRemovalReason.support.rawValue))]
            + revokeSessions(state, reason: AccessEndReason.twoFactorResetBySupport.rawValue, except: nil)
            + revokeGrants(state, now: now)

    case .removeMethod(let method, _):
        record.method = method == .password ? "email" : method.rawValue
        effects = try supportRemoval(of: method, state)

    case .removePasskey(let passkeyID, _):
        guard state.passkeys[passkeyID] != nil else { throw IdentityError.passkeyNotFound }
        guard !state.isLastMethod(passkey: passkeyID) else {
            throw IdentityError(.lastMethod, "This passkey is the account's only way to sign in.")
        }
        record.method = SignInMethod.passkey.rawValue
        record.passkeyID = passkeyID
        effects = [.passkeyRemoved(.init(passkeyID: passkeyID, reason: .support))]

    case .disable(let reason):
        effects = try decideRemoval(state, .disableAccount(reason: reason), context)

    case .enable:
        effects = try decideRemoval(state, .enableAccount, context)
    }
    return [.admin(call.action.recordKind, record)] + effects
}

/// A sign-in method support removes: never the last one. The email goes with its password and
/// its pending links, and gets no revert link (support removed it on purpose, having checked).
private func supportRemoval(of method: SignInMethod, _ state: AccountState) throws -> [AccountEvent] {
    // The email counts whether or not a password goes with it (an address a provider vouched for).
    let present = method == .password ? state.email != nil : state.signInMethods.contains(method)
    guard present else { throw IdentityError(.notLinked, "This account has no such sign-in method.") }
    // What is left must let the person in: another method, or a verified address to reset a
    // password by ("Forgot password"), as an account imported without passwords has.
    let othersLeft = state.signInMethods.contains { $0 != method }
    let resetLeft = method != .password && state.email != nil && state.emailVerified
    guard othersLeft || resetLeft else {
        throw IdentityError(.lastMethod, "This is the account's only sign-in method.")
    }
    switch method {
    case .phone:
        return [.phoneRemoved(.init(phone: state.phone ?? "", reason: .support))]
    case .password:
        let links = state.pendingLinks.values.filter { $0.purpose != .emailRevert }.map(\.id).sorted { $0.uuidString < $1.uuidString }
        return [.emailRemoved(.init(email: state.email ?? "", passwordRemoved: state.hasPassword, reason: .support))]
            + (links.isEmpty ? [] : [.emailLinksRevoked(.init(linkIDs: links, reason: "email_removed"))])
    case .apple, .google:
        let provider: IdentityProvider = method == .apple ? .apple : .google
        return [.providerUnlinked(.init(provider: provider, subject: state.providerSubjects[provider] ?? "", reason: .support))]
            + revokeProviderTokens(state, of: [provider], reason: MethodRemovalReason.support.rawValue)
    case .passkey:
        throw IdentityError(.notLinked, "Remove passkeys one at a time, by their id.")
    }
}

/// Every live re-auth grant revoked (a sign-out by support leaves no grant to a session's thief).
private func revokeGrants(_ state: AccountState, now: Date) -> [AccountEvent] {
    let grants = state.reauthGrants.values.filter { now < $0.expiresAt }.map(\.id).sorted { $0.uuidString < $1.uuidString }
    return grants.isEmpty ? [] : [.reauthGrantsRevoked(.init(grantIDs: grants, reason: AccessEndReason.signedOutBySupport.rawValue))]
}

extension AccountState {
    /// Support changes only an account that lives: `404 no_account` for none, `410
    /// account_deleted` for a deleted or purged one.
    public func requireSupportChangeable() throws {
        guard exists || purgedAt != nil else { throw IdentityError(.noAccount, "No account found.") }
        guard !isDeleted, purgedAt == nil else { throw IdentityError.accountDeleted }
    }

    /// The verified address a reset link from support goes to (`409 no_verified_email`).
    public func requireVerifiedEmailForSupport() throws -> String {
        guard let email, emailVerified else {
            throw IdentityError(.noVerifiedEmail, "This account has no verified email to send a reset link to.")
        }
        return email
    }
}
