import Foundation
import LedgerCore
import LedgerIdentity

/// Email and password changes (docs/architecture.md "Changes"): change password, add email & password,
/// change email with its confirmation and revert links.
extension AccountService {
    /// Sets a new password: re-auth (unless email + password is the only method), every rule
    /// (`same_as_current` included), and every other session revoked; this one stays.
    public func changePassword(_ session: SessionRef, newPassword: String, reauthToken: String?) async throws {
        let state = try await repository.load(session.accountID)
        guard state.hasPassword, state.email != nil else { throw IdentityError(.noPassword, "Add an email and password first.") }
        let tokenHash = reauthToken.map(ReauthGrantToken.hash)
        try state.requireReauth(.changePassword, sessionID: session.sessionID, tokenHash: tokenHash, now: clock.now())
        var problems = environment.passwordPolicy.violations(of: newPassword, email: state.email.flatMap(EmailAddress.init))
            .map { ValidationFailure.Problem(field: "new_password", code: $0.code, message: $0.message) }
        if try await environment.hasher.verify(newPassword, against: state.passwordHash) {
            problems.append(
                .init(field: "new_password", code: "same_as_current", message: "Pick something different from your current password."))
        }
        guard problems.isEmpty else { throw ValidationFailure(problems: problems) }
        let hash = try await environment.hasher.hash(newPassword)
        _ = try await repository.execute(session.accountID) { _ in
            .changePassword(newPasswordHash: hash, sessionID: session.sessionID, reauthTokenHash: tokenHash)
        }
    }

    /// Removes the sign-in phone number, or the email with its password: `409 last_method` when
    /// it is the only sign-in method (checked in the append's transaction, grant or not), then
    /// re-auth (`remove_phone`, `remove_email`). A removed email that was verified gets
    /// `email_removed_notice` with a revert link, and is held from other accounts while the link
    /// lives, as after an email change. Returns the account after.
    public func remove(_ method: RemovableMethod, _ session: SessionRef, reauthToken: String?) async throws -> AccountState {
        let tokenHash = reauthToken.map(ReauthGrantToken.hash)
        switch method {
        case .phone:
            return try await repository.execute(session.accountID) { _ in
                .removePhone(sessionID: session.sessionID, reauthTokenHash: tokenHash)
            }.0
        case .email:
            let state = try await repository.load(session.accountID)
            guard let email = state.email, state.emailVerified else {
                return try await repository.execute(session.accountID) { _ in
                    .removeEmail(sessionID: session.sessionID, reauthTokenHash: tokenHash)
                }.0
            }
            let (link, notice) = try environment.links.makeRevert(of: .removal, to: email, now: clock.now())
            let key = Hex.encode(environment.retention.key(.email(EmailAddress.normalize(email))))
            return try await repository.execute(session.accountID, outbox: [notice]) { current in
                // The address the notice names is the one removed (a change meanwhile is a conflict).
                guard current.email == email else { throw IdentityError(.noEmail, "Your email changed meanwhile. Try again.") }
                return .removeEmail(sessionID: session.sessionID, reauthTokenHash: tokenHash, revertLink: link, emailKey: key)
            }.0
        }
    }

    /// What `DELETE /me/auth-methods/{method}` removes.
    public enum RemovableMethod: String, Sendable {
        case phone, email
    }

    /// What `add-with-password` did.
    public enum EmailAddition: Sendable {
        /// The account's own verified address (from Apple or Google) has its password now (`200` hub).
        case passwordSet(AccountState)
        /// A confirmation link went to the new address; nothing is claimed until it is used
        /// (`202`, with the seconds until another may go).
        case confirmationSent(resendAfter: Int)
    }

    /// Adds an email and a password to an account that has no email (phone or provider
    /// sign-up) or only an Apple private-relay one, with re-auth (`add_method`, checked before
    /// any lookup or hash) and a lookup counted. The address gets a confirmation link
    /// (`email_add_confirm`) and is claimed only when it is used: `409 email_taken` only when
    /// another account holds it verified. An account whose verified address came from Apple or
    /// Google sets a password for it at once.
    public func addEmailAndPassword(
        _ session: SessionRef, email rawEmail: String, password: String, reauthToken: String?, client: String? = nil
    ) async throws -> EmailAddition {
        let email = EmailAddress(rawEmail)
        var problems = email == nil ? [Self.invalidEmail] : []
        problems += environment.passwordPolicy.violations(of: password, email: email)
            .map { ValidationFailure.Problem(field: "password", code: $0.code, message: $0.message) }
        guard problems.isEmpty, let email else { throw ValidationFailure(problems: problems) }
        let state = try await repository.load(session.accountID)
        guard state.canAddPassword(for: email) else {
            throw IdentityError(.emailExists, "You already have an email address. Change it instead.")
        }
        let tokenHash = reauthToken.map(ReauthGrantToken.hash)
        try state.requireReauth(.addMethod, sessionID: session.sessionID, tokenHash: tokenHash, now: clock.now())
        // The account's own verified address is no lookup: nothing is claimed.
        let ownVerified = state.emailVerified && state.email.map(EmailAddress.normalize) == email.normalized
        if !ownVerified {
            try await environment.admit(.lookup, client: client, accountID: session.accountID)
            if let holder = try await repository.emailHolder(email), holder.verified, holder.accountID != session.accountID {
                throw Self.emailTaken
            }
            try await environment.checkCooldown(.email(email.normalized), claimant: session.accountID)
        }
        let hash = try await environment.hasher.hash(password)
        let (link, message) = try environment.links.make(.emailAdd, to: email.value, now: clock.now())
        let (after, events) = try await repository.execute(session.accountID, outbox: ownVerified ? [] : [message]) { _ in
            .addEmailAndPassword(email, passwordHash: hash, link: link, sessionID: session.sessionID, reauthTokenHash: tokenHash)
        }
        if events.contains(where: { if case .passwordSet = $0 { true } else { false } }) { return .passwordSet(after) }
        return .confirmationSent(resendAfter: environment.links.resendAfter(.emailAdd, after, now: clock.now()))
    }

    /// Sends a confirmation link to the new address and an alert (no link) to the old one;
    /// counted as a lookup (the answer may be `email_taken`). Returns the seconds until another
    /// may go (`resend_after`).
    @discardableResult
    public func requestEmailChange(
        _ session: SessionRef, newEmail rawEmail: String, reauthToken: String?, client: String? = nil
    ) async throws -> Int {
        guard let newEmail = EmailAddress(rawEmail) else { throw ValidationFailure(problems: [Self.invalidEmail]) }
        let state = try await repository.load(session.accountID)
        guard let current = state.email else { throw IdentityError(.noEmail, "Add an email address first.") }
        let tokenHash = reauthToken.map(ReauthGrantToken.hash)
        try state.requireReauth(.changeEmail, sessionID: session.sessionID, tokenHash: tokenHash, now: clock.now())
        guard newEmail.normalized != EmailAddress.normalize(current) else {
            throw ValidationFailure(problems: [
                .init(field: "new_email", code: "same_as_current", message: "This is already your email address.")
            ])
        }
        try await environment.admit(.lookup, client: client, accountID: session.accountID)
        guard try await repository.isEmailFree(newEmail) else { throw Self.emailTaken }
        try await environment.checkCooldown(.email(newEmail.normalized), claimant: session.accountID)
        let (link, confirmation) = try environment.links.make(.emailChange, to: newEmail.value, now: clock.now())
        let notice = OutboxMessage(channel: .email, to: current, template: "email_change_notice")
        let (after, _) = try await repository.execute(session.accountID, outbox: [confirmation, notice]) { _ in
            .requestEmailChange(newEmail, link: link, sessionID: session.sessionID, reauthTokenHash: tokenHash)
        }
        return environment.links.resendAfter(.emailChange, after, now: clock.now())
    }

    /// Applies an email change from the new address's link (the old address, when verified, gets
    /// a revert link), or an address `add-with-password` waits for from its confirmation link;
    /// either signs `device` in when given (`confirm`).
    public func confirmEmailChange(token: String, signingIn device: SignInDevice? = nil) async throws -> ConfirmedLink {
        let hash = IssuedTokens.tokenHash(token)
        if let found = try await repository.link(forTokenHash: hash, purpose: .emailAdd) {
            return try await confirmEmailAdd(found, signingIn: device)
        }
        guard let found = try await repository.link(forTokenHash: hash, purpose: .emailChange) else {
            throw IdentityError.linkExpired
        }
        let state = try await repository.load(found.accountID)
        var outbox: [OutboxMessage] = []
        var revertLink = AccountCommand.NewLink(linkID: UUID.random(), expiresAt: clock.now())
        if let old = state.email, state.emailVerified {
            let (link, message) = try environment.links.makeRevert(of: .change, to: old, now: clock.now())
            revertLink = link
            outbox.append(message)
        }
        let hold = state.email.map { Hex.encode(environment.retention.key(.email(EmailAddress.normalize($0)))) }
        return try await claimingEmail {
            try await confirm(
                found.accountID, outbox: outbox, signingIn: device,
                .confirmEmailChange(linkID: found.linkID, revertLink: revertLink, previousEmailKey: hold))
        }
    }

    /// The confirmation of an address `add-with-password` waited for: it becomes the account's
    /// verified email with its password. An account that holds it without having verified it
    /// gives it up first: the link proved who receives its mail. One that verified it keeps it
    /// (`409 email_taken`).
    private func confirmEmailAdd(_ found: (accountID: UUID, linkID: UUID), signingIn device: SignInDevice?) async throws -> ConfirmedLink {
        let state = try await repository.load(found.accountID)
        guard let pending = state.pendingEmail, pending.linkID == found.linkID, let email = EmailAddress(pending.email) else {
            throw IdentityError.linkExpired
        }
        if let holder = try await repository.emailHolder(email), holder.accountID != found.accountID {
            guard !holder.verified else { throw Self.emailTaken }
            _ = try await repository.execute(holder.accountID) { _ in .releaseUnprovenEmail(email) }
        }
        // A verified (private-relay) address replaced gets its way back, as after a change.
        var outbox: [OutboxMessage] = []
        var revertLink: AccountCommand.NewLink?
        var previousKey: String?
        if let previous = state.email, state.emailVerified {
            let (link, message) = try environment.links.makeRevert(of: .change, to: previous, now: clock.now())
            (revertLink, previousKey) = (link, Hex.encode(environment.retention.key(.email(EmailAddress.normalize(previous)))))
            outbox.append(message)
        }
        return try await claimingEmail {
            try await confirm(
                found.accountID, outbox: outbox, signingIn: device,
                .confirmEmailAdd(linkID: found.linkID, revertLink: revertLink, previousEmailKey: previousKey))
        }
    }

    /// What a revert did: the address back, the methods it removed (`phone`, `apple`, `google`),
    /// and whether it turned TOTP off.
    public struct Revert: Sendable {
        public let state: AccountState
        public let removedMethods: [String]
        public let twoFactorReset: Bool
    }

    /// Restores the address from its revert link (of a change or a removal) and undoes the
    /// takeover: every session, grant, link and code ends, the methods added in the change's
    /// span go, and the password becomes `newPassword`, which is required when the account had
    /// one at the change. A spent or expired link is `410` whatever the password.
    public func revertEmail(token: String, newPassword: String?) async throws -> Revert {
        guard let found = try await repository.link(forTokenHash: IssuedTokens.tokenHash(token), purpose: .emailRevert),
            let link = try await repository.load(found.accountID).liveLink(found.linkID, purpose: .emailRevert, at: clock.now())
        else { throw IdentityError.linkExpired }
        let hadPassword = link.undoes?.hadPassword ?? false
        var hash: String?
        if let newPassword, !newPassword.isEmpty {
            let violations = environment.passwordPolicy.violations(of: newPassword, email: EmailAddress(link.email))
            guard violations.isEmpty else {
                throw ValidationFailure(problems: violations.map { .init(field: "new_password", code: $0.code, message: $0.message) })
            }
            hash = try await environment.hasher.hash(newPassword)
        } else if hadPassword {
            throw ValidationFailure(problems: [Self.newPasswordRequired])
        }
        let chosen = hash
        let (state, events) = try await claimingEmail {
            try await repository.execute(found.accountID) { _ in .revertEmail(linkID: found.linkID, newPasswordHash: chosen) }
        }
        guard case .emailReverted(let reverted) = events.first else { throw IdentityError.linkExpired }
        return Revert(state: state, removedMethods: reverted.removedMethods, twoFactorReset: reverted.twoFactorReset)
    }

    static let newPasswordRequired = ValidationFailure.Problem(
        field: "new_password", code: "required", message: "Choose a new password: whoever changed your email may know the old one.")

    /// A change whose address another account claimed meanwhile is `409 email_taken`, in the
    /// words for a signed-in user (not sign-up's "Log in instead.").
    private func claimingEmail<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let taken as ClaimTaken where taken.claim == .email {
            throw Self.emailTaken
        }
    }

    static let emailTaken = IdentityError(.emailTaken, "This email is already in use by another account.")
}
