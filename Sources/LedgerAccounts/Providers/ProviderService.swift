import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Sign in with Apple and Google, linking and disconnecting them, and re-auth by them
/// (docs/architecture.md "Changes", "Re-auth").
public struct ProviderService: Sendable {
    let environment: AccountsEnvironment
    let verifier: any IdentityTokenVerifier
    let linkTokens: ProviderLinkTokens
    /// Checks Apple's server-to-server notifications; nil: none are accepted.
    let notificationVerifier: (any AppleNotificationVerifier)?
    /// Exchanges the apps' authorization codes for refresh tokens.
    let tokenClient: any ProviderTokenClient
    var repository: any AccountRepository { environment.repository }
    var clock: any LedgerClock { environment.clock }

    public init(
        environment: AccountsEnvironment, verifier: any IdentityTokenVerifier, linkTokens: ProviderLinkTokens,
        notificationVerifier: (any AppleNotificationVerifier)? = nil,
        tokenClient: any ProviderTokenClient = UnconfiguredProviderTokenClient()
    ) {
        self.environment = environment
        self.verifier = verifier
        self.linkTokens = linkTokens
        self.notificationVerifier = notificationVerifier
        self.tokenClient = tokenClient
    }

    /// Signs in the account the identity is linked to; else links it to the account holding
    /// the same address when both sides vouch for that address (the provider says verified,
    /// and the account verified it too: no pre-account hijacking; Apple private-relay
    /// addresses never link); else, when the provider vouches for an address an account holds
    /// unverified, creates nothing and answers `LinkRequired`; else creates an account, which
    /// keeps the address only when the provider vouches for it. An address the provider does not
    /// vouch for is no address here: it neither links, nor blocks, nor is kept. Returns
    /// whether one was created. With `linkToken`, the identity waiting in it is linked to the
    /// account this sign-in proves.
    ///
    /// With `authorizationCode`, the provider's refresh token is fetched first and kept on the
    /// account, to be revoked at the provider later; a `link_required` answer carries it in its
    /// link token.
    public func signIn(
        _ provider: IdentityProvider, idToken: String, nonce: String?, displayName: String?, device: String?,
        linkToken: String? = nil, authorizationCode: String? = nil, client: String? = nil, deviceToken: String? = nil,
        locale: String? = nil
    ) async throws -> (AccountService.Session, created: Bool) {
        let waiting = try linkToken.map(waitingIdentity)
        let identity = try await verifier.verify(idToken, provider: provider, nonce: nonce)
        let token = await fetchToken(authorizationCode, for: identity, client: client)
        let (session, created) = try await signIn(
            identity, token: token, displayName: displayName, device: SignInDevice(label: device, token: deviceToken, locale: locale),
            linkToken: linkToken)
        if let token { try await keep(token, on: session.accountID) }
        if let waiting { try await link(waiting, to: session) }
        return (session, created)
    }

    /// The refresh token `code` is exchanged for, for the identity the ID token proved; nil
    /// without a code, when the service holds no credentials for the provider
    /// (`LedgerConfiguration.warnings` says so at start), when the account keeps a token for
    /// this identity and app already, past the client's exchange budget (`RequestLimits`: an ID
    /// token replayed from many requests must not become as many calls to the provider), or
    /// when the exchange fails. A failed
    /// exchange never fails the sign-in: the ID token proved the person, a code can be stale
    /// (Apple's SDK repeats one after a revocation), and sign-ins must not wait on the
    /// provider's token endpoint being up. The client logs why.
    func fetchToken(_ code: String?, for identity: ProviderIdentity, client: String?) async -> AccountState.ProviderToken? {
        guard let code, !code.isEmpty, code.utf8.count <= Self.longestAuthorizationCode, tokenClient.canExchange(identity.provider),
            let clientID = identity.audience
        else { return nil }
        if let owner = try? await repository.providerOwner(identity.provider, subject: identity.subject),
            let kept = try? await repository.load(owner).providerTokens[identity.provider],
            kept.subject == identity.subject, kept.clientID == clientID
        {
            return nil
        }
        guard (try? await environment.admit(.tokenExchange, client: client, accountID: nil)) != nil,
            let refreshToken = try? await tokenClient.exchange(
                code: code, provider: identity.provider, clientID: clientID, subject: identity.subject)
        else { return nil }
        return AccountState.ProviderToken(
            provider: identity.provider, subject: identity.subject, clientID: clientID, refreshToken: refreshToken)
    }

    /// Keeps a fetched refresh token on the account its identity is linked to; when the identity
    /// was disconnected meanwhile (or the account deleted), there is nothing to keep it for.
    func keep(_ token: AccountState.ProviderToken, on accountID: UUID, parkedRevocation: UUID? = nil) async throws {
        do {
            _ = try await repository.execute(accountID) { _ in .storeProviderTokens(token, parkedRevocation: parkedRevocation) }
        } catch is IdentityError {
        }
    }

    /// The identity waiting in a `link_token`: `410 link_expired` unless it is one of ours and in time.
    public func waitingIdentity(_ linkToken: String) throws -> ProviderLinkTokens.WaitingLink {
        try linkTokens.open(linkToken, now: clock.now())
    }

    /// Links a waiting identity to the account a sign-in just proved (no re-auth: the sign-in is
    /// the proof), when that is the account the token was made for and it still holds the
    /// identity's email; else `409 link_mismatch`. When it cannot be linked, the new session ends
    /// and the answer is the error.
    public func link(_ waiting: ProviderLinkTokens.WaitingLink, to session: AccountService.Session) async throws {
        let identity = waiting.identity
        do {
            guard session.accountID == waiting.holder else { throw ProviderLinkTokens.mismatch }
            _ = try await repository.execute(session.accountID) { state in
                guard let email = identity.email, state.email.map(EmailAddress.normalize) == EmailAddress.normalize(email) else {
                    throw ProviderLinkTokens.mismatch
                }
                return .linkProvider(identity, sessionID: nil, reauthTokenHash: nil)
            }
            if let token = waiting.token { try await keep(token, on: session.accountID, parkedRevocation: waiting.parkedRevocation) }
        } catch {
            try? await environment.revoke(
                session: SessionRef(accountID: session.accountID, sessionID: session.sessionID), reason: "link_failed")
            if let taken = error as? ClaimTaken, taken.claim == .apple || taken.claim == .google { throw Self.inUse(identity.provider) }
            throw error
        }
    }

    private func signIn(
        _ identity: ProviderIdentity, token: AccountState.ProviderToken?, displayName: String?, device: SignInDevice, linkToken: String?
    ) async throws -> (AccountService.Session, created: Bool) {
        let provider = identity.provider
        let claim = AccountCommand.ProviderIdentityClaim(
            provider: provider, subject: identity.subject, email: identity.email, emailVerified: identity.emailVerified)
        for _ in 0..<3 {
            if let owner = try await repository.providerOwner(provider, subject: identity.subject) {
                do {
                    return (
                        try await startSession(
                            owner, provider: provider, subject: identity.subject, device: device, linkToken: linkToken, token: token), false
                    )
                } catch let error as IdentityError where error.code == .notLinked {
                    continue  // unlinked (a revert, a disconnect) since it was looked up: look again
                }
            }
            // A deleted account's identity neither joins another account nor starts a new one yet.
            try await environment.checkCooldown(.provider(provider, identity.subject))
            if let holder = try await holderOfAddress(identity, claim) {
                guard holder.mergeable else {
                    // The refresh token the sign-in fetched waits in the link token; should the
                    // link never be made, a revocation parked until the token's end gives it up.
                    let parked = try await park(
                        token, until: clock.now().addingTimeInterval(linkTokens.lifetime), for: holder.state.accountID)
                    throw LinkRequired(
                        linkToken: try linkTokens.issue(
                            claim, holder: holder.state.accountID, token: token, parkedRevocation: parked, now: clock.now()),
                        emailHint: holder.state.email.flatMap(EmailAddress.init)?.hint ?? "•••",
                        methods: holder.state.signInMethods, provider: provider)
                }
                let owner = holder.state.accountID
                do {
                    // Judged again under the account's lock: a password, a second factor or
                    // another address that came meanwhile makes it `link_required` after all.
                    _ = try await repository.execute(owner) { _ in .mergeProvider(claim) }
                    return (
                        try await startSession(
                            owner, provider: provider, subject: identity.subject, device: device, linkToken: linkToken, token: token), false
                    )
                } catch let error as IdentityError where error.code == .providerInUse {
                    // That account has another identity of this provider: a new account instead.
                } catch let error as IdentityError where error.code == .linkRequired || error.code == .notLinked {
                    continue  // the account changed since it was read: look again
                }
            }
            // Only an address the provider vouches for: an unproven one kept on the account would
            // let whoever holds such a provider account sit on someone else's address (its owner
            // could sign up only to find it taken, and a reset would meet the squatter's factors).
            let vouched = identity.emailVerified ? identity.email : nil
            // An address a deleted account held may not register again within the cooldown, by a
            // provider either (`409 signup_cooldown`, as an email sign-up gets).
            let email = try await vouched.flatMap(EmailAddress.init).asyncFilter { address in
                guard try await repository.isEmailFree(address) else { return false }
                try await environment.checkCooldown(.email(address.normalized))
                return true
            }
            let tokens = try await environment.issueTokens(now: clock.now())
            let sessionID = UUID.random()
            do {
                let (state, _) = try await repository.execute(UUID.random()) { _ in
                    .registerByProvider(
                        .init(
                            identity: claim, email: email, displayName: displayName,
                            handle: Handle.randomTemporary(),
                            session: .init(
                                sessionID: sessionID, method: provider.rawValue, device: device.label, tokens: tokens.hashes,
                                deviceID: UUID.random(), locale: device.locale)))
                }
                return (try await environment.session(state, sessionID, tokens), true)
            } catch is ClaimTaken {
                continue  // a concurrent sign-in took the subject, the address or the handle: look again
            }
        }
        throw IdentityError(.providerInUse, "This \(provider.displayName) account could not be signed in. Try again.")
    }

    /// The account holding the address the provider vouches for (never an Apple private-relay
    /// one), and whether the identity may join it without a sign-in to it: only when the
    /// account verified the address too, has no second factor, and has no password. A password
    /// may have been set by whoever registered the address before its owner (or by an intruder
    /// who took the account): joining it would hand them the provider's owner, so that account
    /// answers `link_required`, and the person proves it once (or resets the password, which
    /// ends every session).
    private func holderOfAddress(_ identity: ProviderIdentity, _ claim: AccountCommand.ProviderIdentityClaim) async throws -> (
        state: AccountState, mergeable: Bool
    )? {
        guard identity.emailVerified, !identity.isPrivateRelay, let email = identity.email.flatMap(EmailAddress.init),
            let found = try await repository.credentials(forEmail: email.normalized)
        else { return nil }
        let state = try await repository.load(found.accountID)
        return (state, state.acceptsProviderMerge(of: claim))
    }

    /// Starts the session of a sign-in by `subject`, while the account still holds that identity
    /// (`notLinked` when it left meanwhile: the caller looks again).
    private func startSession(
        _ accountID: UUID, provider: IdentityProvider, subject: String, device: SignInDevice, linkToken: String?,
        token: AccountState.ProviderToken?
    ) async throws -> AccountService.Session {
        let pending = try await environment.pendingSignIn(linkToken: linkToken, providerToken: token)
        let deviceID = environment.deviceID(presented: device.token, of: accountID)
        let (state, events) = try await repository.execute(accountID) { _ in
            .startSession(
                pending.newSession(method: provider.rawValue, device: device.label, deviceID: deviceID, locale: device.locale),
                proof: .provider(provider, subject: subject))
        }
        return try await pending.session(state, events, environment: environment)
    }

    /// Parks the revocation of a refresh token whose sign-in is not done: due at `until`, and
    /// withdrawn when the token is kept. Nil without a token.
    private func park(_ token: AccountState.ProviderToken?, until: Date, for accountID: UUID) async throws -> UUID? {
        guard let token else { return nil }
        let message = try repository.revocations.message(
            revoking: token, notBefore: until.addingTimeInterval(ProviderTokenRevocations.parkingMargin))
        try await repository.park(message, accountID: accountID)
        return message.id
    }

    /// Connects a provider to the signed-in account, with re-auth (`add_method`, checked
    /// before the token is looked at); `provider_in_use` when the identity belongs to another
    /// account (which one is never said). With `authorizationCode`, the refresh token is fetched
    /// and kept as at sign-in. An account without an email takes the address the provider
    /// vouches for as its verified email, when no other account holds it (nor a deleted
    /// account's cooldown, nor another account's revert link).
    public func link(
        _ session: SessionRef, _ provider: IdentityProvider, idToken: String, reauthToken: String?, authorizationCode: String? = nil,
        client: String? = nil
    ) async throws -> AccountState {
        let tokenHash = reauthToken.map(ReauthGrantToken.hash)
        try await repository.load(session.accountID).requireReauth(
            .addMethod, sessionID: session.sessionID, tokenHash: tokenHash, now: clock.now())
        let identity = try await verifier.verify(idToken, provider: provider, nonce: nil)
        try await environment.checkClaimable(
            .provider(provider, identity.subject), owner: try await repository.providerOwner(provider, subject: identity.subject),
            claimant: session.accountID, taken: Self.inUse(provider))
        let token = await fetchToken(authorizationCode, for: identity, client: client)
        let claim = AccountCommand.ProviderIdentityClaim(
            provider: provider, subject: identity.subject, email: identity.email, emailVerified: identity.emailVerified)
        func link(adoptingEmail: Bool) async throws -> AccountState {
            do {
                return try await repository.execute(session.accountID) { _ in
                    .linkProvider(claim, sessionID: session.sessionID, reauthTokenHash: tokenHash, adoptsEmail: adoptingEmail)
                }.0
            } catch let taken as ClaimTaken where taken.claim == .apple || taken.claim == .google {
                throw Self.inUse(provider)
            }
        }
        let adoptsEmail = try await isAdoptable(identity, by: session.accountID)
        let linked: AccountState
        do {
            linked = try await link(adoptingEmail: adoptsEmail)
        } catch  where adoptsEmail && Self.refusesEmailClaim(error) {
            linked = try await link(adoptingEmail: false)  // the address was claimed or listed meanwhile
        }
        if let token { try await keep(token, on: session.accountID) }
        return linked
    }

    /// Disconnects a provider: `409 last_method` when it is the only sign-in method (checked
    /// inside the append's transaction, so two racing disconnects cannot leave none), then the
    /// re-auth guard.
    public func disconnect(_ session: SessionRef, _ provider: IdentityProvider, reauthToken: String?) async throws -> AccountState {
        try await repository.execute(session.accountID) { _ in
            .unlinkProvider(provider, sessionID: session.sessionID, reauthTokenHash: reauthToken.map(ReauthGrantToken.hash))
        }.0
    }

    /// Whether linking `identity` gives the account `accountID` its email: the account has none,
    /// and the provider vouches for an address nobody holds or lists.
    private func isAdoptable(_ identity: ProviderIdentity, by accountID: UUID) async throws -> Bool {
        guard identity.emailVerified, let email = identity.email.flatMap(EmailAddress.init),
            try await repository.load(accountID).email == nil, try await repository.isEmailFree(email)
        else { return false }
        do {
            try await environment.checkCooldown(.email(email.normalized))
        } catch is IdentityError {
            return false
        }
        return true
    }

    /// A claim of an address refused: another account holds it, or lists it (cooldown, revert link).
    private static func refusesEmailClaim(_ error: any Error) -> Bool {
        if let taken = error as? ClaimTaken { return taken.claim == .email }
        guard let refusal = error as? IdentityError else { return false }
        return refusal.code == .signupCooldown || refusal.code == .emailHeld
    }

    /// "Verify it's you" by signing in again with the linked provider. The ID token must be
    /// fresh (`iat` at most `reauthNonceLifetime` old, 5 minutes) and carry a nonce this session asked for
    /// (`ReauthService.issueNonce`), raw or as its SHA-256 in hex; the nonce is used up. So a
    /// token lifted from another sign-in, or an hour-old one, proves nothing here.
    public func reauth(_ session: SessionRef, _ provider: IdentityProvider, idToken: String) async throws -> ReauthGrantToken {
        let identity = try await verifier.verify(idToken, provider: provider, nonce: nil)
        guard let issuedAt = identity.issuedAt, clock.now().timeIntervalSince(issuedAt) <= environment.policies.reauthNonceLifetime else {
            throw InvalidIdentityToken("the token is older than the re-auth window")
        }
        guard let carried = identity.nonce, !carried.isEmpty else { throw InvalidIdentityToken("the token carries no nonce") }
        let state = try await repository.load(session.accountID)
        guard state.providerSubjects[provider] == identity.subject else {
            throw InvalidIdentityToken("the token is for another \(provider.rawValue) account")
        }
        let presented = [Hex.encode(SHA256.hash(Array(carried.utf8))), carried]
        let issued = try environment.issueReauthGrant(method: provider.reauthMethod)
        let (after, _) = try await repository.execute(session.accountID) { _ in
            .grantReauth(sessionID: session.sessionID, issued.grant, presentedNonceHashes: presented)
        }
        return ReauthGrantToken(token: issued.token, grantID: issued.grant.grantID, in: after)
    }

    /// The longest authorization code passed on to a provider (theirs are a few hundred bytes).
    static let longestAuthorizationCode = 2048

    static func inUse(_ provider: IdentityProvider) -> IdentityError {
        IdentityError(.providerInUse, "This \(provider.displayName) account is already connected to another account.")
    }
}

extension Optional {
    /// The value when `isIncluded` says so.
    func asyncFilter(_ isIncluded: (Wrapped) async throws -> Bool) async rethrows -> Wrapped? {
        guard let value = self, try await isIncluded(value) else { return nil }
        return value
    }
}
