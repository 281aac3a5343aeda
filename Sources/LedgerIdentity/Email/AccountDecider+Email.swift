import Foundation
import LedgerCrypto

/// `decide` for email links, passwords and email changes.
func decideEmail(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    let now = context.now
    switch command {
    case .sendVerificationLink(let link):
        try requireAccount(state)
        guard let email = state.email, !state.emailVerified else { return [] }
        try checkLinkRate(state, .verifyEmail, context.policies.linkResend, now: now)
        return [.emailVerificationSent(.init(email: email, linkID: link.linkID, expiresAt: link.expiresAt, tokenHash: link.tokenHash))]

    case .confirmVerificationLink(let linkID):
        try requireLiveAccount(state)
        guard let link = state.liveLink(linkID, purpose: .verifyEmail, at: now),
            EmailAddress.normalize(link.email) == state.email.map(EmailAddress.normalize)
        else { throw IdentityError.linkExpired }
        return [.emailVerified(.init(email: link.email))]

    case .sendPasswordResetLink(let link):
        guard state.exists, let email = state.email else {
            throw IdentityError(.noAccount, "No account found for that email.")
        }
        try checkLinkRate(state, .passwordReset, context.policies.linkResend, now: now)
        return [.passwordResetRequested(.init(email: email, linkID: link.linkID, expiresAt: link.expiresAt, tokenHash: link.tokenHash))]

    case .resetPassword(let linkID, let newPasswordHash):
        try requireLiveAccount(state)
        guard let link = state.liveLink(linkID, purpose: .passwordReset, at: now) else {
            throw IdentityError.linkExpired
        }
        // An address proven here for the first time: whoever added the account's other ways in
        // could not prove it (a squatter who registered the address, then added a phone), so
        // they go with the old password.
        var proven: [AccountEvent] = []
        if !state.emailVerified, EmailAddress.normalize(link.email) == state.email.map(EmailAddress.normalize) {
            proven =
                [.emailVerified(.init(email: link.email, via: "password_reset"))]
                + removeMethods(state, reason: .addressProven, removingTOTP: state.totp != nil) { _ in true }
        }
        return proven + [.passwordSet(.init(passwordHash: newPasswordHash, reason: .reset))]
            + revokeSessions(state, reason: "password_reset", except: nil)
            + endPendingAccess(state, reason: .passwordReset, except: linkID, now: now)

    case .rehashPassword(let replaced, let newPasswordHash):
        try requireAccount(state)
        guard state.passwordHash == replaced else { return [] }
        // Another system's form (an imported account's) gives way to the service's own.
        if Scrypt.parameters(of: replaced) == nil {
            return [.passwordRehashed(.init(passwordHash: newPasswordHash, replacedForm: ForeignPasswordHash(replaced)?.form.rawValue))]
        }
        return [.passwordSet(.init(passwordHash: newPasswordHash, reason: .rehash))]

    case .changePassword(let newPasswordHash, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.hasPassword, state.email != nil else {
            throw IdentityError(.noPassword, "Add an email and password first.")
        }
        try state.requireReauth(.changePassword, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.passwordSet(.init(passwordHash: newPasswordHash, reason: .change, sessionID: sessionID))]
            + revokeSessions(state, reason: "password_changed", except: sessionID)
            + endPendingAccess(state, reason: .passwordChanged, except: nil, now: now)

    case .addEmailAndPassword(let email, let passwordHash, let link, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.canAddPassword(for: email) else {
            throw IdentityError(.emailExists, "You already have an email address. Change it instead.")
        }
        try state.requireReauth(.addMethod, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        // The account's own address, which Apple or Google vouched for: the password at once.
        if state.emailVerified, state.email.map(EmailAddress.normalize) == email.normalized {
            return [.passwordSet(.init(passwordHash: passwordHash, reason: .add, sessionID: sessionID))]
        }
        // Any other address is claimed only once its link proves it: whoever holds a session and
        // a phone must not sit on someone else's address meanwhile.
        try checkLinkRate(state, .emailAdd, context.policies.linkResend, now: now)
        return [
            .emailAddRequested(
                .init(
                    email: email.value, linkID: link.linkID, expiresAt: link.expiresAt, tokenHash: link.tokenHash, sessionID: sessionID,
                    passwordHash: passwordHash))
        ]

    case .releaseUnprovenEmail(let address):
        // Never the holder's only way in: whoever clicked a stranger's confirmation link in their
        // own mailbox must not find their own account left with nothing (`email_taken` instead).
        guard state.exists, !state.isDeleted, let email = state.email, !state.emailVerified,
            EmailAddress.normalize(email) == address.normalized, state.signInMethods != [.password]
        else { return [] }
        let links = state.pendingLinks.values.filter { $0.purpose != .emailRevert }.map(\.id).sorted { $0.uuidString < $1.uuidString }
        return [.emailRemoved(.init(email: email, passwordRemoved: state.hasPassword, reason: .provenByAnotherAccount))]
            + (links.isEmpty ? [] : [.emailLinksRevoked(.init(linkIDs: links, reason: "email_removed"))])

    case .confirmEmailAdd(let linkID, let revertLink, let previousEmailKey):
        try requireLiveAccount(state)
        // The session that asked must still be live: signing everyone out ends a pending addition.
        guard let link = state.liveLink(linkID, purpose: .emailAdd, at: now), let pending = state.pendingEmail,
            pending.linkID == linkID, state.sessions[pending.sessionID]?.isActive == true
        else { throw IdentityError.linkExpired }
        let password = AccountEvent.passwordSet(.init(passwordHash: pending.passwordHash, reason: .add, sessionID: pending.sessionID))
        // A verified private-relay address replaced: a change like any other, with its way back.
        if let previous = state.email, state.emailVerified, let revertLink {
            return [
                .emailChanged(
                    .init(
                        email: link.email, previousEmail: previous, previousEmailVerified: true, linkID: linkID,
                        revertLinkID: revertLink.linkID, revertExpiresAt: revertLink.expiresAt, revertTokenHash: revertLink.tokenHash,
                        previousEmailKey: previousEmailKey, sessionID: pending.sessionID)),
                password,
            ]
        }
        return [.emailAdded(.init(email: link.email, verifiedBy: "link", sessionID: pending.sessionID, linkID: linkID)), password]

    case .requestEmailChange(let newEmail, let link, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.email != nil else { throw IdentityError(.noEmail, "Add an email address first.") }
        try state.requireReauth(.changeEmail, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        try checkLinkRate(state, .emailChange, context.policies.linkResend, now: now)
        // A new request ends the earlier change links: a mistyped address corrected must not
        // leave its link live in a stranger's mailbox, who could confirm it and take the account.
        let superseded = state.pendingLinks.values.filter { $0.purpose == .emailChange }.sorted {
            ($0.expiresAt, $0.id.uuidString) < ($1.expiresAt, $1.id.uuidString)
        }
        return (superseded.isEmpty ? [] : [.emailLinksRevoked(.init(linkIDs: superseded.map(\.id), reason: "superseded"))]) + [
            .emailChangeRequested(
                .init(
                    email: newEmail.value, linkID: link.linkID, expiresAt: link.expiresAt, tokenHash: link.tokenHash, sessionID: sessionID))
        ]

    case .confirmEmailChange(let linkID, let revertLink, let previousEmailKey):
        try requireLiveAccount(state)
        guard let link = state.liveLink(linkID, purpose: .emailChange, at: now) else {
            throw IdentityError.linkExpired
        }
        // The change ends with the session that asked for it: signing it out (everywhere, after
        // an alert) stops a change waiting in an intruder's mailbox.
        if let asker = link.sessionID, state.sessions[asker]?.isActive != true { throw IdentityError.linkExpired }
        // Only a proven address is held for its revert link (it gets none otherwise).
        return [
            .emailChanged(
                .init(
                    email: link.email, previousEmail: state.email, previousEmailVerified: state.emailVerified, linkID: linkID,
                    revertLinkID: revertLink.linkID, revertExpiresAt: revertLink.expiresAt, revertTokenHash: revertLink.tokenHash,
                    previousEmailKey: state.email != nil && state.emailVerified ? previousEmailKey : nil, sessionID: link.sessionID))
        ]

    case .revertEmail(let linkID, let newPasswordHash):
        try requireLiveAccount(state)
        guard let link = state.liveLink(linkID, purpose: .emailRevert, at: now) else {
            throw IdentityError.linkExpired
        }
        let change =
            link.undoes ?? AccountState.RevertibleChange(version: state.version, sessionID: nil, hadPassword: false, at: now)
        // Whoever made the change may know the password it had, or have set one since.
        guard newPasswordHash != nil || !(change.hadPassword || state.hasPassword) else {
            throw IdentityError(.newPasswordRequired, "Choose a new password: whoever changed your email may know the old one.")
        }
        // The takeover undone: what was added after the change, what the session that made it
        // added before it (an intruder links their Google, then removes the email), and what
        // any session added in the day before it (an intruder preparing from a second session).
        let lookBack = change.at.addingTimeInterval(-context.policies.revertLookBack)
        let inSpan = { (version: Int64?, sessionID: UUID?, at: Date?) -> Bool in
            guard let version else { return false }
            if version > change.version { return true }
            guard let sessionID else { return false }
            return sessionID == change.sessionID || (at.map { $0 >= lookBack } ?? false)
        }
        let undone = { (origin: AccountState.MethodOrigin?) -> Bool in inSpan(origin?.version, origin?.sessionID, origin?.at) }
        // TOTP turned on, or its recovery codes replaced, in the span (by the changing session,
        // by any session the day before, or after): the factor may be the intruder's.
        let totpInSpan = state.totp.map { totp in
            undone(totp.enabledOrigin) || undone(totp.recoveryCodesOrigin)
                || (change.sessionID != nil && totp.enrolledBy == change.sessionID)
        }
        // A pending enrolment goes whoever began it: every session ends, and none may finish it.
        let removals = removeMethods(
            state, reason: .emailReverted, removingTOTP: totpInSpan == true || state.totp?.enabled == false, where: undone)
        let password: [AccountEvent] = newPasswordHash.map { [.passwordSet(.init(passwordHash: $0, reason: .revert))] } ?? []
        // The revert links of changes after this one end with it (by the changes' order, not
        // their expiry, which a configuration change can reorder).
        let later = state.pendingLinks.values.filter { other in
            guard other.purpose == .emailRevert, other.id != linkID else { return false }
            guard let otherChange = other.undoes else { return other.expiresAt >= link.expiresAt }
            return otherChange.version > change.version
        }.map(\.id).sorted { $0.uuidString < $1.uuidString }
        return [
            .emailReverted(
                .init(
                    email: link.email, linkID: linkID, removedMethods: removedMethods(removals),
                    twoFactorReset: twoFactorTurnedOff(removals), endedRevertLinkIDs: later))
        ] + removals + password
            + revokeSessions(state, reason: "email_reverted", except: nil)
            + endPendingAccess(state, reason: .emailReverted, except: linkID, now: now)

    case .removeEmail(let sessionID, let reauthTokenHash, let revertLink, let emailKey):
        try requireAccount(state)
        guard let email = state.email else { throw IdentityError(.noEmail, "There is no email on this account.") }
        guard state.signInMethods != [.password] else {
            throw IdentityError(
                .lastMethod,
                "This is your only sign-in method. Add a phone number, Apple or Google first — then you can remove your email.")
        }
        try state.requireReauth(.removeEmail, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        // Links sent to the address end with it; revert links (to earlier addresses) stay, the way back after a takeover.
        let links = state.pendingLinks.values.filter { $0.purpose != .emailRevert }.map(\.id).sorted { $0.uuidString < $1.uuidString }
        // A proven address gets its own way back, as after a change; one never verified gets none.
        let revert = state.emailVerified ? revertLink : nil
        return [
            .emailRemoved(
                .init(
                    email: email, passwordRemoved: state.hasPassword, sessionID: sessionID, revertLinkID: revert?.linkID,
                    revertExpiresAt: revert?.expiresAt, revertTokenHash: revert?.tokenHash, emailKey: revert == nil ? nil : emailKey))
        ]
            + (links.isEmpty ? [] : [.emailLinksRevoked(.init(linkIDs: links, reason: "email_removed"))])

    default:
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
}
