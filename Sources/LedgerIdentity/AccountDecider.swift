import Foundation
import LedgerCrypto

/// Decides which events a command produces from the account's current state, or why it is
/// refused. Pure: the same state, command and time always give the same answer.
public func decide(_ state: AccountState, _ command: AccountCommand, now: Date) throws -> [AccountEvent] {
    switch command {
    case .register(let registration):
        guard !state.exists else { throw IdentityError(.accountExists, "This email is already in use. Log in instead.") }
        return [
            .registered(.init(email: registration.email.value, displayName: registration.displayName, method: "email")),
            .passwordSet(.init(passwordHash: registration.passwordHash, reason: "signup")),
            .handleClaimed(.init(handle: registration.handle.value, temporary: registration.handleIsTemporary)),
            .emailVerificationSent(
                .init(
                    email: registration.email.value, linkID: registration.verificationLink.linkID,
                    expiresAt: registration.verificationLink.expiresAt, tokenHash: registration.verificationLink.tokenHash)),
            sessionStarted(registration.session),
        ]

    case .startSession(let session):
        try requireAccount(state)
        guard !state.isDisabled else { throw IdentityError.accountDisabled }
        // Two-factor on: no session yet, a challenge instead. A sign-in path that brings no
        // challenge is refused here rather than let through without the second factor.
        if state.isTOTPEnabled {
            guard let stepUp = session.stepUp else { throw IdentityError(.mfaRequired, "Enter the code from your authenticator app.") }
            return [
                .mfaChallengeIssued(
                    .init(
                        challengeID: stepUp.challengeID, tokenHash: stepUp.tokenHash, method: session.method, device: session.device,
                        expiresAt: stepUp.expiresAt, linkToken: stepUp.linkToken, deviceID: session.deviceID ?? session.sessionID,
                        providerToken: stepUp.providerToken, parkedRevocationID: stepUp.parkedRevocationID))
            ]
        }
        return [sessionStarted(session)] + newDeviceAlert(state, session)

    case .refreshSession(let sessionID, let presented, let replacement):
        guard let session = state.sessions[sessionID] else { throw IdentityError.sessionExpired }
        guard session.isActive else { throw IdentityError.sessionExpired(lastMethod: session.method) }
        if session.refreshTokenHash != presented {
            // The session was issued this token and has since exchanged it: a spent refresh
            // token came back, so someone holds a copy. End the session.
            return [.sessionRevoked(.init(sessionID: sessionID, reason: "refresh_token_reused"))]
        }
        guard session.refreshExpiresAt > now else {
            throw IdentityError.sessionExpired(lastMethod: session.method)
        }
        return [
            .sessionRefreshed(
                .init(
                    sessionID: sessionID, accessTokenHash: replacement.accessTokenHash, refreshTokenHash: replacement.refreshTokenHash,
                    accessExpiresAt: replacement.accessExpiresAt, refreshExpiresAt: replacement.refreshExpiresAt))
        ]

    case .revokeSession(let sessionID, let reason):
        guard let session = state.sessions[sessionID] else { throw IdentityError(.notFound, "No such session.") }
        return session.isActive ? [.sessionRevoked(.init(sessionID: sessionID, reason: reason))] : []

    case .revokeOtherSessions(let keep):
        try requireAccount(state)
        return revokeSessions(state, reason: "signed_out_elsewhere", except: keep)

    case .sendVerificationLink(let link):
        try requireAccount(state)
        guard let email = state.email, !state.emailVerified else { return [] }
        try checkLinkRate(state, .verifyEmail, link.resend, now: now)
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
        try checkLinkRate(state, .passwordReset, link.resend, now: now)
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
                + removeMethods(state, reason: "address_proven", removingTOTP: state.totp != nil) { _ in true }
        }
        return proven + [.passwordSet(.init(passwordHash: newPasswordHash, reason: "reset"))]
            + revokeSessions(state, reason: "password_reset", except: nil)
            + endPendingAccess(state, reason: .passwordReset, except: linkID, now: now)

    case .rehashPassword(let newPasswordHash):
        try requireAccount(state)
        return [.passwordSet(.init(passwordHash: newPasswordHash, reason: "rehash"))]

    case .recordLoginFailure(let failures, let lockedUntil):
        try requireAccount(state)
        return [.loginFailed(.init(failures: failures))] + (lockedUntil.map { [.loginThrottled(.init(until: $0))] } ?? [])

    case .updateProfile(let displayName, let handle):
        try requireAccount(state)
        var events: [AccountEvent] = []
        if let displayName, displayName != state.displayName {
            events.append(.profileUpdated(.init(displayName: displayName)))
        }
        if let handle, handle.value != state.handle || state.handleIsTemporary {
            events.append(.handleClaimed(.init(handle: handle.value, temporary: false)))
        }
        return events

    case .registerByPhone(let registration):
        guard !state.exists else { throw IdentityError(.accountExists, "This account already exists.") }
        return [
            .registered(.init(email: nil, displayName: nil, method: "phone")),
            .phoneLinked(.init(phone: registration.phone.e164, region: registration.phone.region, requestID: registration.requestID)),
            .handleClaimed(.init(handle: registration.handle.value, temporary: true)),
            sessionStarted(registration.session),
        ]

    case .linkPhone(let phone, let requestID, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.phone == nil else {
            throw IdentityError(.phoneExists, "You already have a phone number. Change it instead.")
        }
        try state.requireReauth(.addMethod, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.phoneLinked(.init(phone: phone.e164, region: phone.region, requestID: requestID, sessionID: sessionID))]

    case .changePhone(let phone, let requestID, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.phone != nil else { throw IdentityError(.noPhone, "Add a phone number first.") }
        try state.requireReauth(.changePhone, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        guard phone.e164 != state.phone || phone.region != state.phoneRegion else { return [] }
        return [
            .phoneChanged(
                .init(phone: phone.e164, region: phone.region, previousPhone: state.phone, requestID: requestID, sessionID: sessionID))
        ]

    case .grantReauth(let sessionID, let grant, let presentedNonceHashes):
        try requireAccount(state)
        guard state.sessions[sessionID]?.isActive == true else { throw IdentityError.sessionExpired }
        var nonceID: UUID?
        if let presentedNonceHashes {
            // The ID token must carry a live nonce this session asked for: one made for another
            // session, used already or expired proves nothing about this moment.
            guard
                let nonce = state.reauthNonces.values.first(where: {
                    $0.sessionID == sessionID && now < $0.expiresAt && presentedNonceHashes.contains($0.nonceHash)
                })
            else { throw IdentityError.invalidToken }
            nonceID = nonce.id
        }
        return [reauthGranted(grant, sessionID: sessionID, linkID: nil, nonceID: nonceID, now: now)]

    case .issueReauthNonce(let sessionID, let nonce):
        try requireAccount(state)
        guard state.sessions[sessionID]?.isActive == true else { throw IdentityError.sessionExpired }
        // Counted per session: a stolen session filling the account's slots must not lock
        // the owner's own session out of provider re-auth.
        let live = state.reauthNonces.values.filter { $0.sessionID == sessionID && now < $0.expiresAt }
        if live.count >= Policies.standard.reauthNonceLimit, let oldest = live.map(\.expiresAt).min() {
            throw IdentityError(
                .rateLimited, "Too many sign-in attempts. Try again later.",
                retryAfter: max(1, Int(oldest.timeIntervalSince(now).rounded(.up))))
        }
        return [
            .reauthNonceIssued(
                .init(
                    nonceID: nonce.nonceID, sessionID: sessionID, nonceHash: nonce.nonceHash,
                    expiresAt: now.addingTimeInterval(nonce.lifetime)))
        ]

    case .recordReauthFailure(let sessionID, let method):
        try requireAccount(state)
        return [.reauthFailed(.init(sessionID: sessionID, method: method.rawValue))]

    case .recordMFADailyLimit(let until, let sessionID):
        // Only where a second factor is on: wrong TOTP re-auths of an account without one guess
        // nothing, and telling its owner would let a session holder fill their mailbox.
        guard state.exists, !state.isDeleted, state.isTOTPEnabled else { return [] }
        return [.mfaDailyLimitReached(.init(until: until, sessionID: sessionID))]

    case .sendReauthLink(let link, let sessionID):
        try requireAccount(state)
        guard let email = state.email else { throw IdentityError(.noEmail, "Add an email address first.") }
        try checkLinkRate(state, .reauth, link.resend, now: now)
        return [
            .reauthLinkSent(
                .init(
                    email: email, linkID: link.linkID, expiresAt: link.expiresAt, tokenHash: link.tokenHash, sessionID: sessionID))
        ]

    case .confirmReauthLink(let linkID, let grant):
        try requireLiveAccount(state)
        guard let link = state.liveLink(linkID, purpose: .reauth, at: now), let sessionID = link.sessionID else {
            throw IdentityError.linkExpired
        }
        // The link reached the address, so the address is proven: it may now vouch (as the
        // password of a verified account does) for adding a method.
        let verified: [AccountEvent] =
            !state.emailVerified && EmailAddress.normalize(link.email) == state.email.map(EmailAddress.normalize)
            ? [.emailVerified(.init(email: link.email, via: "reauth_link"))] : []
        return verified + [reauthGranted(grant, sessionID: sessionID, linkID: linkID, nonceID: nil, now: now)]

    case .changePassword(let newPasswordHash, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.hasPassword, state.email != nil else {
            throw IdentityError(.noPassword, "Add an email and password first.")
        }
        try state.requireReauth(.changePassword, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.passwordSet(.init(passwordHash: newPasswordHash, reason: "change", sessionID: sessionID))]
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
            return [.passwordSet(.init(passwordHash: passwordHash, reason: "add", sessionID: sessionID))]
        }
        // Any other address is claimed only once its link proves it: whoever holds a session and
        // a phone must not sit on someone else's address meanwhile.
        try checkLinkRate(state, .emailAdd, link.resend, now: now)
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
        return [.emailRemoved(.init(email: email, passwordRemoved: state.hasPassword, reason: "proven_by_another_account"))]
            + (links.isEmpty ? [] : [.emailLinksRevoked(.init(linkIDs: links, reason: "email_removed"))])

    case .confirmEmailAdd(let linkID, let revertLink, let previousEmailKey):
        try requireLiveAccount(state)
        // The session that asked must still be live: signing everyone out ends a pending addition.
        guard let link = state.liveLink(linkID, purpose: .emailAdd, at: now), let pending = state.pendingEmail,
            pending.linkID == linkID, state.sessions[pending.sessionID]?.isActive == true
        else { throw IdentityError.linkExpired }
        let password = AccountEvent.passwordSet(.init(passwordHash: pending.passwordHash, reason: "add", sessionID: pending.sessionID))
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
        try checkLinkRate(state, .emailChange, link.resend, now: now)
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
        let lookBack = change.at.addingTimeInterval(-Policies.standard.revertLookBack)
        let inSpan = { (version: Int64?, sessionID: UUID?, at: Date?) -> Bool in
            guard let version else { return false }
            if version > change.version { return true }
            guard let sessionID else { return false }
            return sessionID == change.sessionID || (at.map { $0 >= lookBack } ?? false)
        }
        let undone = { (origin: AccountState.MethodOrigin?) -> Bool in inSpan(origin?.version, origin?.sessionID, origin?.at) }
        // TOTP turned on, or its recovery codes replaced, in the span: the factor may be the intruder's.
        let totpInSpan = state.totp.map { totp in
            inSpan(totp.enabledAtVersion, totp.enrolledBy, nil) || inSpan(totp.recoveryCodesAtVersion, nil, nil)
                || (change.sessionID != nil && totp.enrolledBy == change.sessionID)
        }
        let removals = removeMethods(state, reason: "email_reverted", removingTOTP: totpInSpan == true, where: undone)
        let password: [AccountEvent] = newPasswordHash.map { [.passwordSet(.init(passwordHash: $0, reason: "revert"))] } ?? []
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
                    twoFactorReset: removals.contains { if case .totpDisabled = $0 { true } else { false } }, endedRevertLinkIDs: later))
        ] + removals + password
            + revokeSessions(state, reason: "email_reverted", except: nil)
            + endPendingAccess(state, reason: .emailReverted, except: linkID, now: now)

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

    case .disableAccount(let reason):
        try requireAccount(state)
        guard !state.isDisabled else { return [] }
        return [.accountDisabled(.init(reason: reason))]
            + revokeSessions(state, reason: "account_disabled", except: nil)
            + endPendingAccess(state, reason: .accountDisabled, except: nil, now: now)

    case .enableAccount:
        try requireAccount(state)
        // Apple asked for the deletion; holds only delay it. Enabling would reopen the account
        // to its other sign-in methods meanwhile.
        guard state.deletionRequestedAt == nil else {
            throw IdentityError(.deletionRequested, "This account's deletion was requested; it cannot be enabled.")
        }
        return state.isDisabled ? [.accountEnabled(.init())] : []

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
                ? [] : [.providerUnlinked(.init(provider: .apple, subject: notice.subject, reason: "apple_consent_revoked"))]
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

    case .completeRequestedDeletion(let purgeDelay, let cooldown, let cooldownKeys):
        try requireAccount(state)
        guard state.deletionRequestedAt != nil, state.deletionBlockers(at: now).isEmpty else { return [] }
        return scheduleDeletion(state, purgeDelay: purgeDelay, cooldown: cooldown, cooldownKeys: cooldownKeys, now: now)

    case .removePhone(let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard let phone = state.phone else { throw IdentityError(.noPhone, "There is no phone number on this account.") }
        guard state.signInMethods != [.phone] else {
            throw IdentityError(
                .lastMethod,
                "This is your only sign-in method. Add an email, Apple or Google first — then you can remove your phone number.")
        }
        try state.requireReauth(.removePhone, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.phoneRemoved(.init(phone: phone))]

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

    case .placeHold(let hold):
        guard !state.isDeleted else { throw IdentityError.accountDeleted }
        try requireAccount(state)
        if let existing = state.holds[hold.ref] {
            // Another backend's hold is not this key's to overwrite, nor to learn about.
            guard existing.isOwned(by: hold.keyID) else { throw IdentityError.holdNotFound }
            if existing == hold { return [] }
        }
        return [.holdPlaced(hold)]

    case .releaseHold(let ref, let keyID, let administrator):
        try requireAccount(state)
        guard let existing = state.holds[ref] else { return [] }
        guard administrator || existing.isOwned(by: keyID) else { throw IdentityError.holdNotFound }
        return [.holdReleased(.init(ref: ref, keyID: keyID))]

    case .lapseHolds:
        guard state.exists, !state.isDeleted else { return [] }
        return state.holds.values.filter { $0.hasLapsed(at: now) }.sorted { $0.ref < $1.ref }
            .map { .holdLapsed(.init(ref: $0.ref, startsAt: $0.startsAt)) }

    case .startTOTPEnrolment(let secret, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard !state.isTOTPEnabled else { throw IdentityError.mfaAlreadyEnabled }
        // Whoever registered an address they do not own must not lock its owner out with a second
        // factor: a grant earned by the password of an unverified email does not serve `manageMFA`
        // (`requireReauth`), and the email link that does verifies the address.
        try state.requireReauth(.manageMFA, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.totpEnrolmentStarted(.init(secret: secret, sessionID: sessionID))]

    case .confirmTOTP(let step, let recoveryCodeHashes, let sessionID):
        try requireAccount(state)
        guard let totp = state.totp, totp.enabled || totp.enrolledBy == nil || totp.enrolledBy == sessionID else {
            throw IdentityError(.mfaNotEnabled, "Set up two-factor authentication first.")
        }
        guard !totp.enabled else { throw IdentityError.mfaAlreadyEnabled }
        guard let step, step > (totp.lastUsedStep ?? .min) else { throw IdentityError.incorrectCode(attemptsRemaining: nil) }
        return [.totpCodeUsed(.init(step: step)), .totpEnabled(.init(recoveryCodeHashes: recoveryCodeHashes))]

    case .disableTOTP(let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.totp != nil else { throw IdentityError.mfaNotEnabled }
        try state.requireReauth(.manageMFA, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.totpDisabled(.init())]

    case .regenerateRecoveryCodes(let hashes, let sessionID, let reauthTokenHash):
        try requireAccount(state)
        guard state.isTOTPEnabled else { throw IdentityError.mfaNotEnabled }
        try state.requireReauth(.manageMFA, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return [.recoveryCodesRegenerated(.init(recoveryCodeHashes: hashes))]

    case .completeMFAChallenge(let challengeID, let tokenHash, let proof, let session):
        try requireAccount(state)
        guard !state.isDisabled else { throw IdentityError.accountDisabled }
        guard let challenge = state.mfaChallenges[challengeID], now < challenge.expiresAt, state.isTOTPEnabled,
            ConstantTime.equals(Array(challenge.tokenHash.utf8), Array(tokenHash.utf8))
        else { throw IdentityError.mfaExpired }
        guard let used = state.secondFactor(proof) else {
            let failures = challenge.failures + 1
            let ended: [AccountEvent] =
                failures >= Policies.standard.mfaMaxFailures
                ? [.mfaChallengeEnded(.init(challengeID: challengeID, reason: "too_many_failures"))] : []
            return [.mfaChallengeFailed(.init(challengeID: challengeID, failures: failures))] + ended
        }
        var started = session
        started.method = challenge.method
        started.device = challenge.device
        started.deviceID = challenge.deviceID
        // The provider's refresh token the sign-in fetched is the account's now; its parked
        // revocation is withdrawn in the same transaction.
        let kept: [AccountEvent] =
            challenge.providerToken.flatMap { token in
                state.providerSubjects[token.provider] == token.subject
                    ? [storedToken(token, parkedRevocation: challenge.parkedRevocationID)] : nil
            } ?? []
        return [used, .mfaChallengeEnded(.init(challengeID: challengeID, reason: "passed")), sessionStarted(started)] + kept
            + newDeviceAlert(state, started)

    case .grantReauthByTOTP(let sessionID, let grant, let step):
        try requireAccount(state)
        guard state.sessions[sessionID]?.isActive == true else { throw IdentityError.sessionExpired }
        guard state.isTOTPEnabled, let used = state.secondFactor(.totp(step: step)) else {
            throw IdentityError.incorrectCode(attemptsRemaining: nil)
        }
        return [used, reauthGranted(grant, sessionID: sessionID, linkID: nil, nonceID: nil, now: now)]

    case .deleteAccount(let sessionID, let reauthTokenHash, let purgeDelay, let cooldown, let cooldownKeys):
        try requireAccount(state)
        // Blockers before re-auth (docs/architecture.md "Deletion"): no one verifies it's them
        // for a deletion that cannot happen yet.
        let blockers = state.deletionBlockers(at: now)
        guard blockers.isEmpty else { throw DeletionBlocked(blockers: blockers) }
        try state.requireReauth(.deleteAccount, sessionID: sessionID, tokenHash: reauthTokenHash, now: now)
        return scheduleDeletion(state, purgeDelay: purgeDelay, cooldown: cooldown, cooldownKeys: cooldownKeys, now: now)
    }
}

/// A deletion refused because backends still hold the account (`409 deletion_blocked`).
public struct DeletionBlocked: Error, Sendable, Equatable {
    public let blockers: [DeletionBlocker]
}

private func providerLinked(_ identity: AccountCommand.ProviderIdentityClaim, sessionID: UUID? = nil) -> AccountEvent {
    .providerLinked(
        .init(
            provider: identity.provider, subject: identity.subject, email: identity.email, emailVerified: identity.emailVerified,
            sessionID: sessionID))
}

private func storedToken(_ token: AccountState.ProviderToken, parkedRevocation: UUID?) -> AccountEvent {
    .providerTokensStored(
        .init(
            provider: token.provider, subject: token.subject, clientID: token.clientID, refreshToken: token.refreshToken,
            parkedRevocationID: parkedRevocation))
}

/// Removes the sign-in methods (phone, providers, with their tokens) whose origin `isRemoved`
/// picks, each with its own event saying why, and TOTP when `removingTOTP`: a revert's span, or
/// everything but the address a reset just proved.
private func removeMethods(
    _ state: AccountState, reason: String, removingTOTP: Bool, where isRemoved: (AccountState.MethodOrigin?) -> Bool
) -> [AccountEvent] {
    var events: [AccountEvent] = []
    if let phone = state.phone, isRemoved(state.methodOrigins[SignInMethod.phone.rawValue]) {
        events.append(.phoneRemoved(.init(phone: phone, reason: reason)))
    }
    var providers: [IdentityProvider] = []
    for provider in IdentityProvider.allCases {
        guard let subject = state.providerSubjects[provider], isRemoved(state.methodOrigins[provider.rawValue]) else { continue }
        events.append(.providerUnlinked(.init(provider: provider, subject: subject, reason: reason)))
        providers.append(provider)
    }
    events += revokeProviderTokens(state, of: providers, reason: reason)
    if removingTOTP, state.totp != nil { events.append(.totpDisabled(.init(reason: reason))) }
    return events
}

/// The methods `events` remove, as the API names them (`phone`, `apple`, `google`).
public func removedMethods(_ events: [AccountEvent]) -> [String] {
    events.compactMap { event in
        switch event {
        case .phoneRemoved: return SignInMethod.phone.rawValue
        case .providerUnlinked(let unlinked): return unlinked.provider.rawValue
        default: return nil
        }
    }
}

/// A deletion: the purge and the cooldown scheduled, every session, link and grant ended, and
/// the providers' tokens revoked.
private func scheduleDeletion(
    _ state: AccountState, purgeDelay: TimeInterval, cooldown: TimeInterval, cooldownKeys: [String], now: Date
) -> [AccountEvent] {
    [
        .deletionScheduled(
            .init(
                purgeAfter: now.addingTimeInterval(purgeDelay), cooldownUntil: now.addingTimeInterval(cooldown), cooldownKeys: cooldownKeys)
        )
    ]
        + revokeSessions(state, reason: "account_deleted", except: nil)
        + endPendingAccess(state, reason: .accountDeleted, except: nil, now: now)
        + revokeProviderTokens(state, of: IdentityProvider.allCases, reason: "account_deleted")
}

/// The stored refresh tokens of `providers` given up; the repository queues each one's
/// revocation at the provider in the same transaction.
private func revokeProviderTokens(_ state: AccountState, of providers: [IdentityProvider], reason: String) -> [AccountEvent] {
    providers.filter { state.providerTokens[$0] != nil }.map { .providerTokenRevoked(.init(provider: $0, reason: reason)) }
}

/// A sign-in from a device the account has not seen (by its `device_token` alone: labels are
/// the client's to say) tells its verified address; the account's first session (its sign-up)
/// does not.
private func newDeviceAlert(_ state: AccountState, _ session: AccountCommand.NewSession) -> [AccountEvent] {
    let device = session.device ?? DeviceLabel.unknown
    guard let email = state.email, state.emailVerified, !state.sessions.isEmpty,
        !state.knownDevices.contains(session.deviceID ?? session.sessionID)
    else { return [] }
    return [.newDeviceAlerted(.init(sessionID: session.sessionID, device: device, email: email))]
}

/// Revocations of every active session but `kept`, oldest first.
private func revokeSessions(_ state: AccountState, reason: String, except kept: UUID?) -> [AccountEvent] {
    state.sessions.values.filter { $0.isActive && $0.id != kept }.sorted { $0.createdAt < $1.createdAt }
        .map { .sessionRevoked(.init(sessionID: $0.id, reason: reason)) }
}

private func reauthGranted(_ grant: AccountCommand.NewGrant, sessionID: UUID, linkID: UUID?, nonceID: UUID?, now: Date) -> AccountEvent {
    .reauthGranted(
        .init(
            grantID: grant.grantID, sessionID: sessionID, method: grant.method.rawValue, tokenHash: grant.tokenHash,
            expiresAt: now.addingTimeInterval(grant.lifetime), linkID: linkID, nonceID: nonceID))
}

/// Recovery (and deletion) wins: every pending email link but the one being used, and every
/// live re-auth grant, ends with it, so whoever holds a copy (an attacker's email-change link,
/// a grant earned on a stolen session) holds nothing (docs/architecture.md "Re-auth"). Revert
/// links end only as `AccessEndReason.endsRevertLinks` says.
private func endPendingAccess(_ state: AccountState, reason: AccessEndReason, except usedLink: UUID?, now: Date) -> [AccountEvent] {
    let links = state.pendingLinks.values
        .filter { $0.id != usedLink && (reason.endsRevertLinks || $0.purpose != .emailRevert) }
        .map(\.id).sorted { $0.uuidString < $1.uuidString }
    let grants = state.reauthGrants.values.filter { now < $0.expiresAt }.map(\.id).sorted { $0.uuidString < $1.uuidString }
    var events: [AccountEvent] = []
    if !links.isEmpty { events.append(.emailLinksRevoked(.init(linkIDs: links, reason: reason.rawValue))) }
    if !grants.isEmpty { events.append(.reauthGrantsRevoked(.init(grantIDs: grants, reason: reason.rawValue))) }
    return events
}

private func checkLinkRate(
    _ state: AccountState, _ purpose: AccountState.PendingLink.Purpose, _ policy: LinkResendPolicy, now: Date
) throws {
    if let retryAfter = policy.retryAfter(state.linkSendTimes[purpose] ?? [], now: now) {
        throw IdentityError(.rateLimited, "Too many emails sent. Try again later.", retryAfter: retryAfter)
    }
}

private func requireAccount(_ state: AccountState) throws {
    guard state.exists, !state.isDeleted else { throw IdentityError(.noAccount, "No account found.") }
}

/// For links: a deleted account's links are expired, whatever their time says.
private func requireLiveAccount(_ state: AccountState) throws {
    guard state.exists, !state.isDeleted else { throw IdentityError.linkExpired }
}

private func sessionStarted(_ session: AccountCommand.NewSession) -> AccountEvent {
    .sessionStarted(
        .init(
            sessionID: session.sessionID, method: session.method, device: session.device,
            accessTokenHash: session.tokens.accessTokenHash, refreshTokenHash: session.tokens.refreshTokenHash,
            accessExpiresAt: session.tokens.accessExpiresAt, refreshExpiresAt: session.tokens.refreshExpiresAt,
            deviceID: session.deviceID ?? session.sessionID, locale: session.locale))
}
