import Foundation
import LedgerCrypto

/// `decide` for phone numbers and re-auth.
func decidePhoneAndReauth(_ state: AccountState, _ command: AccountCommand, _ context: DecisionContext) throws -> [AccountEvent] {
    let now = context.now
    switch command {
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
        if live.count >= context.policies.reauthNonceLimit, let oldest = live.map(\.expiresAt).min() {
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

    case .sendReauthLink(let link, let sessionID):
        try requireAccount(state)
        guard let email = state.email else { throw IdentityError(.noEmail, "Add an email address first.") }
        try checkLinkRate(state, .reauth, context.policies.linkResend, now: now)
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

    default:
        preconditionFailure("decide routes \(command.name) elsewhere")
    }
}
