import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// The email-and-password use cases: sign-up, sign-in, sessions. Validates input, hashes
/// passwords on the bounded pool, and runs commands through the repository.
public struct AccountService: Sendable {
    /// What the use cases work with; the other services hold the same one.
    public let environment: AccountsEnvironment
    var repository: any AccountRepository { environment.repository }
    var clock: any LedgerClock { environment.clock }
    /// Moves `last_used_at` of the sessions that authenticate (`serve` runs its writer).
    public var activity: SessionActivity { environment.activity }

    public init(environment: AccountsEnvironment) {
        self.environment = environment
    }

    /// A signed-in session as the API returns it.
    public struct Session: Sendable, Equatable {
        public let accountID: UUID
        public let sessionID: UUID
        public let accessToken: String
        public let refreshToken: String
        public let expiresIn: Int
        public let emailVerified: Bool
        /// The device the session came from (`X-Device-Token` on later sign-ins).
        public let deviceToken: String
    }

    /// Field-level problems with the input, all of them.
    public struct ValidationFailure: Error, Sendable, Equatable {
        public struct Problem: Sendable, Equatable {
            public let field: String
            public let code: String
            public let message: String

            public init(field: String, code: String, message: String) {
                self.field = field
                self.code = code
                self.message = message
            }

            /// A value outside `values`: "Use a, b or c." (one message, "Use {} or {}.", for
            /// every list: `ErrorMessages` says it in each language).
            public static func oneOf(field: String, code: String, values: [String]) -> Problem {
                Problem(field: field, code: code, message: "Use \(values.dropLast().joined(separator: ", ")) or \(values.last ?? "").")
            }
        }
        public let problems: [Problem]

        public init(problems: [Problem]) {
            self.problems = problems
        }
    }

    /// Registers an email + password account. Counted against the client's sign-ups and
    /// lookups (`RequestLimits`) once the input is valid, before the cooldown is read or the
    /// password hashed.
    public func signUp(
        email rawEmail: String, password: String, displayName: String?, handle rawHandle: String?, device: String?,
        client: String? = nil, deviceToken: String? = nil, locale: String? = nil
    ) async throws -> Session {
        var problems: [ValidationFailure.Problem] = []
        let email = EmailAddress(rawEmail)
        if email == nil { problems.append(Self.invalidEmail) }
        for violation in environment.passwordPolicy.violations(of: password, email: email) {
            problems.append(.init(field: "password", code: violation.code, message: violation.message))
        }
        var handle: Handle?
        if let rawHandle, !rawHandle.isEmpty {
            handle = Handle(rawHandle)
            if handle == nil { problems.append(Self.invalidHandle) }
        }
        if let displayName, displayName.count > 100 {
            problems.append(.init(field: "display_name", code: "too_long", message: "Use at most 100 characters."))
        }
        guard problems.isEmpty, let email else { throw ValidationFailure(problems: problems) }
        // A flood that has filled the sign-ups' share of the hashing queue costs nothing more.
        guard environment.hasher.acceptsNewPasswords else { throw PasswordHasherError.overloaded }
        try await environment.admit(.signup, client: client, accountID: nil)
        // A taken address is answered before the hash (and without the insert failing on the claim).
        guard try await repository.isEmailFree(email) else { throw ClaimTaken(claim: .email) }
        try await environment.checkCooldown(.email(email.normalized))
        let requestedHandle = handle

        let passwordHash = try await environment.hasher.hash(password)
        for attempt in 0..<5 {
            let accountID = UUID.random()
            let now = clock.now()
            let tokens = try await environment.issueTokens(now: now)
            let sessionID = UUID.random()
            let chosenHandle = requestedHandle ?? Handle.randomTemporary()
            let (link, message) = try environment.links.make(.verifyEmail, to: email.value, now: now)
            do {
                let (state, _) = try await repository.execute(accountID, outbox: [message]) { _ in
                    .register(
                        .init(
                            email: email, passwordHash: passwordHash, displayName: displayName, handle: chosenHandle,
                            handleIsTemporary: requestedHandle == nil,
                            session: .init(
                                sessionID: sessionID, method: "email", device: device, tokens: tokens.hashes,
                                deviceID: UUID.random(), locale: locale),
                            verificationLink: link))
                }
                return try await environment.session(state, sessionID, tokens)
            } catch let taken as ClaimTaken where taken.claim == .handle && requestedHandle == nil && attempt < 4 {
                continue  // a generated handle collided: draw another
            }
        }
        throw ClaimTaken(claim: .handle)
    }

    /// Signs in with email and password. An unknown email costs a full hash too. Each attempt
    /// is counted before the password is hashed (per email and per client address, atomically
    /// across instances), so after `maximumFailures` failures for one email every attempt, right
    /// or wrong, is refused with `TooManyAttempts` until the lockout ends, however many race.
    /// Every failure for an existing account is an event on its history, the lockout too.
    /// With two-factor authentication on, the right password issues a challenge instead
    /// (`MFARequired`); `linkToken` waits in it until the second factor is passed.
    public func signIn(
        email rawEmail: String, password: String, device: String?, client: String? = nil, linkToken: String? = nil,
        deviceToken: String? = nil, locale: String? = nil
    ) async throws -> Session {
        let email = EmailAddress(rawEmail)
        let admission = try await environment.admit(
            [email.map { environment.throttle.key(email: $0.normalized) }, client.map { environment.throttle.key(address: $0) }])
        var found: (accountID: UUID, passwordHash: String?)?
        if let email { found = try await repository.credentials(forEmail: email.normalized) }
        guard try await environment.hasher.verify(password, against: found?.passwordHash), let found, let storedHash = found.passwordHash
        else {
            let lockouts = try await environment.throttle.failed(admission, now: clock.now())
            let lockedUntil = admission.keys.first.flatMap { lockouts[$0] }
            if let found {
                _ = try await repository.execute(found.accountID) { _ in
                    .recordLoginFailure(failures: admission.attempt, lockedUntil: lockedUntil)
                }
            }
            throw IdentityError.invalidCredentials
        }
        try await environment.throttle.succeeded(admission)
        let pending = try await environment.pendingSignIn(linkToken: linkToken)
        // The hash checked, or its rehash once stored: the session starts only while the account
        // still has it (a revert or reset committed meanwhile wins: `SignInProof`).
        let checkedHash = try await environment.rehashIfDue(found.accountID, checked: storedHash, password: password)
        let deviceID = environment.deviceID(presented: deviceToken, of: found.accountID)
        let proof = SignInProof.password(hash: checkedHash, email: email?.normalized ?? "")
        let (state, events) = try await repository.execute(found.accountID) { _ in
            .startSession(
                pending.newSession(method: "email", device: device, deviceID: deviceID, locale: locale),
                proof: proof)
        }
        return try await pending.session(state, events, environment: environment)
    }

    /// Exchanges a refresh token for a new pair. A spent token presented again revokes its
    /// session (someone else holds a copy) and answers `session_expired`.
    public func refresh(_ refreshToken: String) async throws -> Session {
        let presented = IssuedTokens.tokenHash(refreshToken)
        guard let found = try await repository.session(forRefreshHash: presented) else { throw IdentityError.sessionExpired }
        let tokens = try await environment.issueTokens(now: clock.now())
        let (state, events) = try await repository.execute(found.accountID) { _ in
            .refreshSession(sessionID: found.sessionID, presentedRefreshHash: Hex.encode(presented), replacement: tokens.hashes)
        }
        if case .sessionRevoked = events.first {
            throw state.sessions[found.sessionID].map { IdentityError.sessionExpired(lastMethod: $0.method) } ?? .sessionExpired
        }
        return try await environment.session(state, found.sessionID, tokens)
    }

    public func revoke(session: SessionRef, reason: String) async throws {
        try await environment.revoke(session: session, reason: reason)
    }

    /// The session an access token belongs to, when it is live (its use is recorded).
    public func authenticate(accessToken: String) async throws -> SessionRef? {
        guard let hash = await environment.accessHash(presented: accessToken) else { return nil }
        let session = try await repository.session(forAccessHash: hash, at: clock.now())
        if let session { activity.used(session) }
        return session
    }

    /// The account behind a live access token, read from the projection; nil when not live.
    /// A use of the session like any other (`last_used_at`).
    public func summary(accessToken: String) async throws -> AccountSummary? {
        guard let hash = await environment.accessHash(presented: accessToken),
            let found = try await repository.summary(forAccessHash: hash, at: clock.now())
        else {
            return nil
        }
        activity.used(found.session)
        return found.summary
    }

    /// The sessions screen for a live access token: its session and the account's live
    /// sessions, most recently used first; nil when the token is not live. A use of the session.
    public func liveSessions(accessToken: String) async throws -> (session: SessionRef, sessions: [SessionListing])? {
        guard let hash = await environment.accessHash(presented: accessToken),
            let found = try await repository.liveSessions(forAccessHash: hash, at: clock.now())
        else {
            return nil
        }
        activity.used(found.session)
        return found
    }

    /// "Sign out all other devices".
    public func revokeOtherSessions(_ session: SessionRef) async throws {
        _ = try await repository.execute(session.accountID) { _ in .revokeOtherSessions(keep: session.sessionID) }
    }

    /// What a backend may know about an access token; nil when it is not live.
    public func introspect(accessToken: String) async throws -> Introspection? {
        guard let hash = await environment.accessHash(presented: accessToken) else { return nil }
        return try await repository.introspect(accessHash: hash, at: clock.now())
    }

    public func account(_ accountID: UUID) async throws -> AccountState {
        try await repository.load(accountID)
    }

    /// The language the account's messages take (`AccountState.messageLocale`: its choice, else
    /// its latest sign-in's); nil when it has none, or cannot be read now (an error's message
    /// then falls back, and never hides the error). Read at most once a minute an account
    /// (`RecentLanguages`).
    public func messageLanguage(_ accountID: UUID) async -> Language? {
        let now = clock.now()
        if let kept = environment.recentLanguages.language(of: accountID, at: now) { return kept }
        guard let state = try? await repository.load(accountID) else { return nil }
        let language = Language(tag: state.messageLocale)
        environment.recentLanguages.keep(language, of: accountID, at: now)
        return language
    }

    /// Sends a new verification link to the account's address (202), within the resend limit;
    /// returns the seconds until another may go (`resend_after`).
    @discardableResult
    public func resendVerification(_ accountID: UUID) async throws -> Int {
        let state = try await repository.load(accountID)
        guard let email = state.email, !state.emailVerified else {
            return environment.links.resendAfter(.verifyEmail, state, now: clock.now())
        }
        let (link, message) = try environment.links.make(.verifyEmail, to: email, now: clock.now())
        let (after, _) = try await repository.execute(accountID, outbox: [message]) { _ in .sendVerificationLink(link) }
        return environment.links.resendAfter(.verifyEmail, after, now: clock.now())
    }

    /// Whether a link could still do its work (known, unused, not past its time), without using
    /// it: what the link pages' `GET` shows (a mail scanner's prefetch changes nothing).
    public func isLinkUsable(token: String, purposes: [AccountState.PendingLink.Purpose]) async throws -> Bool {
        for purpose in purposes {
            guard let found = try await repository.link(forTokenHash: IssuedTokens.tokenHash(token), purpose: purpose) else { continue }
            return try await repository.load(found.accountID).liveLink(found.linkID, purpose: purpose, at: clock.now()) != nil
        }
        return false
    }

    /// Confirms an email verification link, signing `device` in when given (`confirm`); unknown,
    /// used or expired tokens are `link_expired`.
    public func verifyEmail(token: String, signingIn device: SignInDevice? = nil) async throws -> ConfirmedLink {
        guard let found = try await repository.link(forTokenHash: IssuedTokens.tokenHash(token), purpose: .verifyEmail) else {
            throw IdentityError.linkExpired
        }
        return try await confirm(found.accountID, signingIn: device, .confirmVerificationLink(linkID: found.linkID))
    }

    /// Sends a password-reset link. The contract (openapi.yaml) answers an unknown email with `404 no_account`, so
    /// each request counts as a sign-up and a lookup of the client's, before the lookup. Returns
    /// the seconds until another may go (`resend_after`). The email is in `language`, the
    /// asking browser's, when it names one: whoever asked reads it (an intruder's choice of the
    /// account's language does not reach the owner's own reset).
    @discardableResult
    public func forgotPassword(email rawEmail: String, client: String? = nil, language: Language? = nil) async throws -> Int {
        guard let email = EmailAddress(rawEmail) else { throw ValidationFailure(problems: [Self.invalidEmail]) }
        try await environment.admit(.signup, client: client, accountID: nil)
        guard let found = try await repository.credentials(forEmail: email.normalized) else {
            throw IdentityError(.noAccount, "No account found for that email.")
        }
        let state = try await repository.load(found.accountID)
        let (link, made) = try environment.links.make(.passwordReset, to: state.email ?? email.value, now: clock.now())
        var message = made
        message.requestedLanguage = language
        let (after, _) = try await repository.execute(found.accountID, outbox: [message]) { _ in .sendPasswordResetLink(link) }
        return environment.links.resendAfter(.passwordReset, after, now: clock.now())
    }

    /// What a reset removed: on an address it proved for the first time, every other sign-in
    /// method (`phone`, `apple`, `google`) and TOTP; nothing otherwise.
    public struct Reset: Sendable, Equatable {
        public let removedMethods: [String]
        public let twoFactorReset: Bool
    }

    /// Sets a new password from a reset link and revokes every session. A reset of an address
    /// never verified proves it, and removes what whoever added the other ways in could not.
    @discardableResult
    public func resetPassword(token: String, newPassword: String) async throws -> Reset {
        guard let found = try await repository.link(forTokenHash: IssuedTokens.tokenHash(token), purpose: .passwordReset) else {
            throw IdentityError.linkExpired
        }
        let state = try await repository.load(found.accountID)
        let violations = environment.passwordPolicy.violations(of: newPassword, email: state.email.flatMap(EmailAddress.init))
        guard violations.isEmpty else {
            throw ValidationFailure(problems: violations.map { .init(field: "new_password", code: $0.code, message: $0.message) })
        }
        let hash = try await environment.hasher.hash(newPassword)
        let (_, events) = try await repository.execute(found.accountID) { _ in
            .resetPassword(linkID: found.linkID, newPasswordHash: hash)
        }
        return Reset(
            removedMethods: removedMethods(events), twoFactorReset: twoFactorTurnedOff(events))
    }

    /// Changes the display name (`.some(nil)` clears it) and/or claims a new handle.
    public func updateProfile(
        _ accountID: UUID, displayName: String??, handle rawHandle: String?, locale: String?? = nil
    ) async throws -> AccountState {
        var problems: [ValidationFailure.Problem] = []
        var handle: Handle?
        if let rawHandle {
            handle = Handle(rawHandle)
            if handle == nil { problems.append(Self.invalidHandle) }
        }
        if case .some(.some(let name)) = displayName, name.count > 100 {
            problems.append(.init(field: "display_name", code: "too_long", message: "Use at most 100 characters."))
        }
        if case .some(.some(let tag)) = locale, Language(rawValue: tag) == nil {
            problems.append(.init(field: "locale", code: "invalid_locale", message: "Choose ka, en or ru."))
        }
        guard problems.isEmpty else { throw ValidationFailure(problems: problems) }
        let chosen = handle
        let state = try await repository.execute(accountID) { _ in .updateProfile(displayName: displayName, handle: chosen, locale: locale)
        }.0
        // This instance's refusals speak the new choice at once (others within `RecentLanguages.lifetime`).
        if locale != nil { environment.recentLanguages.keep(Language(tag: state.messageLocale), of: accountID, at: clock.now()) }
        return state
    }

    /// Whether a handle is well-formed (else a validation failure) and free.
    public func isHandleAvailable(_ rawHandle: String) async throws -> Bool {
        guard let handle = Handle(rawHandle) else { throw ValidationFailure(problems: [Self.invalidHandle]) }
        return try await repository.isHandleFree(handle)
    }

    /// Whether an email is well-formed (else a validation failure) and free, checked by the
    /// signed-in `accountID`. Says nothing of who holds it; counted as a lookup of the client's
    /// and the account's first (`RequestLimits`).
    public func isEmailAvailable(_ rawEmail: String, checkedBy accountID: UUID, client: String? = nil) async throws -> Bool {
        guard let email = EmailAddress(rawEmail) else { throw ValidationFailure(problems: [Self.invalidEmail]) }
        try await environment.admit(.lookup, client: client, accountID: accountID)
        return try await repository.isEmailFree(email)
    }

    static let invalidHandle = ValidationFailure.Problem(
        field: "handle", code: "invalid_handle", message: "Use 3–20 letters, numbers or underscores.")
    static let invalidEmail = ValidationFailure.Problem(field: "email", code: "invalid_email", message: "Enter a valid email address.")
}
