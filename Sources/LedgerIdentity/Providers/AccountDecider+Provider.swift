import Foundation
import LedgerCrypto

/// `decide` for Apple and Google.
func decideProvider(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    let now = context.now
    switch command {
    case .registerByProvider(let registration):
        guard !state.exists else { throw IdentityError(.accountExists, "This account already exists.") }
        let identity = registration.identity
        var events: [AccountEvent] = [
            .registered(.init(email: registration.email?.value, displayName: registration.displayName, method: identity.provider.rawValue)),
            providerLinked(identity),
            .handleClaimed(.init(handle: registration.handle.value, temporary: true)),
        ]
        if let email = registration.email, identity.emailVerified, email.normalized == identity.email.map(EmailAddress.normalize) {
            events.append(.emailVerified(.init(email: email.value)))
        }
        return events + [sessionStarted(registration.session)]

    case .linkProvider(let identity, let sessionID, let reauthTokenHash, let adoptsEmail):
        try requireAccount(state)
        guard !state.isDisabled else { throw IdentityError.accountDisabled }
        if let linked = state.providerSubjects[identity.provider] {
            guard linked == identity.subject else {
                throw IdentityError(
                    .providerInUse, "Another \(identity.provider.displayName) account is already connected. Disconnect it first.")
            }
            return []
        }
        if let sessionID {
            try state.requireReauth(.addMethod, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        }
        let linked = providerLinked(identity, sessionID: sessionID)
        guard adoptsEmail, state.email == nil, identity.emailVerified, let email = identity.email.flatMap(EmailAddress.init) else {
            return [linked]
        }
        return [linked, .emailAdded(.init(email: email.value, verifiedBy: identity.provider.rawValue, sessionID: sessionID))]

    case .mergeProvider(let identity):
        try requireAccount(state)
        guard state.acceptsProviderMerge(of: identity) else {
            throw IdentityError(.linkRequired, "Sign in to your account once to connect \(identity.provider.displayName).")
        }
        return try decideProvider(state, .linkProvider(identity, sessionID: nil, reauthTokenHash: nil), context)

    case .unlinkProvider(let provider, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard let subject = state.providerSubjects[provider] else {
            throw IdentityError(.notLinked, "\(provider.displayName) is not connected.")
        }
        // The last-method check comes before re-auth: no grant makes a disconnect to zero methods possible.
        guard state.signInMethods != [provider.signInMethod] else {
            throw IdentityError(
                .lastMethod,
                "This is your only sign-in method. Add a phone number, email, or another provider first — then you can disconnect \(provider.displayName)."
            )
        }
        try state.requireReauth(provider.disconnectAction, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.providerUnlinked(.init(provider: provider, subject: subject))]
            + revokeProviderTokens(state, of: [provider], reason: "disconnected")

    case .storeProviderTokens(let token, let parkedRevocation):
        try requireAccount(state)
        guard state.providerSubjects[token.provider] == token.subject else {
            throw IdentityError(.notLinked, "\(token.provider.displayName) is not connected.")
        }
        // The same token again records nothing, unless a parked revocation of it must be withdrawn.
        guard state.providerTokens[token.provider] != token || parkedRevocation != nil else { return [] }
        return [storedToken(token, parkedRevocation: parkedRevocation)]

    case .handleAppleNotification(let notice):
        try requireAccount(state)
        // Another Apple ID than the account's, or one acted on already: nothing.
        guard state.providerSubjects[.apple] == notice.subject, !state.appleNotificationIDs.contains(notice.id) else { return [] }
        let received = AccountEvent.appleNotificationReceived(
            .init(notificationID: notice.id, type: notice.kind, eventTime: notice.eventTime))
        switch notice.kind {
        case .emailDisabled, .emailEnabled:
            return [received]
        case .consentRevoked:
            // Apple stays when it is the only way in: the person can sign in with it again to come back.
            let unlink: [AccountEvent] =
                state.signInMethods == [.apple]
                ? [] : [.providerUnlinked(.init(provider: .apple, subject: notice.subject, reason: .appleConsentRevoked))]
            return [received] + unlink + revokeProviderTokens(state, of: [.apple], reason: "apple_consent_revoked")
                + revokeSessions(state, reason: "apple_consent_revoked", except: nil)
                + endPendingAccess(state, reason: .appleConsentRevoked, except: nil, now: now)
        case .accountDelete:
            let blockers = state.deletionBlockers(at: now)
            guard blockers.isEmpty else {
                let disabled: [AccountEvent] =
                    state.isDisabled
                    ? []
                    : [
                        .accountDisabled(
                            .init(
                                reason: "apple_account_deleted; deletion blocked by "
                                    + blockers.map(\.kind.rawValue).joined(separator: ", ")))
                    ]
                return [received, .deletionRequested(.init(by: "apple", blockedBy: blockers.map(\.kind)))] + disabled
                    + revokeSessions(state, reason: "account_disabled", except: nil)
                    + endPendingAccess(state, reason: .accountDisabled, except: nil, now: now)
            }
            return [received]
                + scheduleDeletion(
                    state, purgeDelay: notice.purgeDelay, cooldown: notice.cooldown, cooldownKeys: notice.cooldownKeys, now: now)
        }

    default:
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
}
