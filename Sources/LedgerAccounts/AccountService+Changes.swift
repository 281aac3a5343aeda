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
        var problems = policy.violations(of: newPassword, email: state.email.flatMap(EmailAddress.init))
            .map { ValidationFailure.Problem(field: "new_password", code: $0.code, message: $0.message) }
        if try await hasher.verify(newPassword, against: state.passwordHash) {
            problems.append(
                .init(field: "new_password", code: "same_as_current", message: "Pick something different from your current password."))
        }
        guard problems.isEmpty else { throw ValidationFailure(problems: problems) }
        let hash = try await hasher.hash(newPassword)
        _ = try await repository.execute(session.accountID) { _ in
            .changePassword(newPasswordHash: hash, sessionID: session.sessionID, reauthTokenHash: tokenHash)
        }
    }

    /// Removes the sign-in phone number, or the email with its password: `409 last_method` when
    /// it is the only sign-in method (checked in the append's transaction, grant or not), then
    /// re-auth (`remove_phone`, `remove_email`). Returns the account after.
    public func remove(_ method: RemovableMethod, _ session: SessionRef, reauthToken: String?) async throws -> AccountState {
        let tokenHash = reauthToken.map(ReauthGrantToken.hash)
        return try await repository.execute(session.accountID) { _ in
            switch method {
            case .phone: return .removePhone(sessionID: session.sessionID, reauthTokenHash: tokenHash)
            case .email: return .removeEmail(sessionID: session.sessionID, reauthTokenHash: tokenHash)
            }
        }.0
    }

    /// What `DELETE /me/auth-methods/{method}` removes.
    public enum RemovableMethod: String, Sendable {
        case phone, email
    }

    /// Adds an email and a password to an account that has no email (phone or provider
    /// sign-up), with re-auth (`add_method`, checked before any lookup or hash) and a lookup
    /// counted; the address gets a verification link. An account whose address came from Apple
    /// or Google adds a password for that address the same way (a link only if unverified).
    @discardableResult
    public func addEmailAndPassword(
        _ session: SessionRef, email rawEmail: String, password: String, reauthToken: String?, client: String? = nil
    ) async throws -> Int {
        let email = EmailAddress(rawEmail)
        var problems = email == nil ? [Self.invalidEmail] : []
        problems += policy.violations(of: password, email: email)
            .map { ValidationFailure.Problem(field: "password", code: $0.code, message: $0.message) }
        guard problems.isEmpty, let email else { throw ValidationFailure(problems: problems) }
        let state = try await repository.load(session.accountID)
        guard state.canAddPassword(for: email) else {
            throw IdentityError(.emailExists, "You already have an email address. Change it instead.")
        }
        let tokenHash = reauthToken.map(ReauthGrantToken.hash)
        try state.requireReauth(.addMethod, sessionID: session.sessionID, tokenHash: tokenHash, now: clock.now())
        // The account's own address (from Apple or Google) is no lookup: nothing is claimed.
        let keepsAddress = state.email != nil
        if !keepsAddress {
            try await admit(.lookup, client: client, accountID: session.accountID)
            guard try await repository.isEmailFree(email) else { throw Self.emailTaken }
            try await checkCooldown(.email(email.normalized))
        }
        let hash = try await hasher.hash(password)
        let (link, message) = try links.make(.verifyEmail, to: email.value, now: clock.now())
        let outbox = keepsAddress && state.emailVerified ? [] : [message]
        let after = try await claimingEmail {
            try await repository.execute(session.accountID, outbox: outbox) { _ in
                .addEmailAndPassword(
                    email, passwordHash: hash, verificationLink: link, sessionID: session.sessionID, reauthTokenHash: tokenHash)
            }.0
        }
        return links.resendAfter(.verifyEmail, after, now: clock.now())
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
        try await admit(.lookup, client: client, accountID: session.accountID)
        guard try await repository.isEmailFree(newEmail) else { throw Self.emailTaken }
        try await checkCooldown(.email(newEmail.normalized))
        let (link, confirmation) = try links.make(.emailChange, to: newEmail.value, now: clock.now())
        let notice = OutboxMessage(channel: .email, to: current, template: "email_change_notice")
        let (after, _) = try await repository.execute(session.accountID, outbox: [confirmation, notice]) { _ in
            .requestEmailChange(newEmail, link: link, sessionID: session.sessionID, reauthTokenHash: tokenHash)
        }
        return links.resendAfter(.emailChange, after, now: clock.now())
    }

    /// Applies an email change from the new address's link; the old address gets a revert link.
    public func confirmEmailChange(token: String) async throws -> AccountState {
        guard let found = try await repository.link(forTokenHash: IssuedTokens.tokenHash(token), purpose: .emailChange) else {
            throw IdentityError.linkExpired
        }
        let state = try await repository.load(found.accountID)
        var outbox: [OutboxMessage] = []
        var revertLink = AccountCommand.NewLink(linkID: UUID.random(), expiresAt: clock.now())
        if let old = state.email {
            let (link, message) = try links.make(.emailRevert, to: old, now: clock.now())
            revertLink = link
            outbox.append(message)
        }
        let chosenRevert = revertLink
        let hold = state.email.map { Hex.encode(retention.key(.email(EmailAddress.normalize($0)))) }
        return try await claimingEmail {
            try await repository.execute(found.accountID, outbox: outbox) { _ in
                .confirmEmailChange(linkID: found.linkID, revertLink: chosenRevert, previousEmailKey: hold)
            }.0
        }
    }

    /// Restores the old address from its revert link and revokes every session.
    public func revertEmail(token: String) async throws -> AccountState {
        guard let found = try await repository.link(forTokenHash: IssuedTokens.tokenHash(token), purpose: .emailRevert) else {
            throw IdentityError.linkExpired
        }
        return try await claimingEmail {
            try await repository.execute(found.accountID) { _ in .revertEmail(linkID: found.linkID) }.0
        }
    }

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
