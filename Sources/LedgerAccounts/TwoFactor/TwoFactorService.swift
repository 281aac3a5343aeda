import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Two-factor authentication (docs/architecture.md "Two-factor"): TOTP enrolment with re-auth,
/// recovery codes, the second step of a sign-in (`mfa_token`), and re-auth by a TOTP code.
/// Every code check is counted first (`LoginThrottle`: per account and per client, atomically),
/// and a code is accepted once: the account records the time step it spent.
public struct TwoFactorService: Sendable {
    let environment: AccountsEnvironment
    let providers: ProviderService
    /// The name authenticator apps show beside the account (the `otpauth://` issuer).
    let issuer: String
    var repository: any AccountRepository { environment.repository }
    var clock: any LedgerClock { environment.clock }

    public init(
        environment: AccountsEnvironment, providers: ProviderService, issuer: String = "321Fit"
    ) {
        self.environment = environment
        self.providers = providers
        self.issuer = issuer
    }

    /// A TOTP secret to scan: base32, and the `otpauth://` URI for a QR code.
    public struct Enrolment: Sendable, Equatable {
        public let secret: String
        public let uri: String
    }

    /// Begins TOTP enrolment (re-auth `manage_mfa`); TOTP already on is `409 mfa_already_enabled`.
    /// Nothing changes for sign-ins until a first code confirms it.
    public func beginTOTP(_ session: SessionRef, reauthToken: String?) async throws -> Enrolment {
        let secret = try TOTPCodes.newSecret()
        let (state, _) = try await repository.execute(session.accountID) { _ in
            .startTOTPEnrolment(secret: secret, sessionID: session.sessionID, reauthTokenHash: reauthToken.map(ReauthGrantToken.hash))
        }
        let label = state.email ?? state.phone ?? state.handle ?? PublicUserID(accountID: state.accountID).description
        return Enrolment(secret: TOTPCodes.base32(secret), uri: TOTPCodes.uri(secret, label: label, issuer: issuer))
    }

    /// Turns TOTP on with a first code; returns the recovery codes, shown this once.
    public func confirmTOTP(_ session: SessionRef, code: String, client: String?) async throws -> [String] {
        let recovery = try RecoveryCodes.generate(count: environment.policies.recoveryCodeCount)
        let admission = try await admit(session.accountID, .enrolment, client: client)
        try await settling(admission, session.accountID, .enrolment) {
            let state = try await repository.load(session.accountID)
            let step = state.totp.flatMap { TOTPCodes.matchingStep(code, secret: $0.secret, at: clock.now(), policy: environment.policies) }
            _ = try await repository.execute(session.accountID) { _ in
                .confirmTOTP(step: step, recoveryCodeHashes: recovery.hashes, sessionID: session.sessionID)
            }
        }
        try await succeeded(admission)
        return recovery.codes
    }

    /// Turns TOTP off (re-auth `manage_mfa`); the secret and the recovery codes are gone.
    public func disableTOTP(_ session: SessionRef, reauthToken: String?) async throws -> AccountState {
        try await repository.execute(session.accountID) { _ in
            .disableTOTP(sessionID: session.sessionID, reauthTokenHash: reauthToken.map(ReauthGrantToken.hash))
        }.0
    }

    /// New recovery codes (re-auth `manage_mfa`); the old ones are void.
    public func regenerateRecoveryCodes(_ session: SessionRef, reauthToken: String?) async throws -> [String] {
        let recovery = try RecoveryCodes.generate(count: environment.policies.recoveryCodeCount)
        _ = try await repository.execute(session.accountID) { _ in
            .regenerateRecoveryCodes(recovery.hashes, sessionID: session.sessionID, reauthTokenHash: reauthToken.map(ReauthGrantToken.hash))
        }
        return recovery.codes
    }

    /// Finishes a sign-in that answered `mfa_required`: a TOTP code or a recovery code.
    /// Wrong: `401 incorrect_code` with the attempts left; the fifth wrong one, or a token
    /// past its 5 minutes, is `410 mfa_expired`. Right: the session, and the provider
    /// identity the sign-in's `link_token` carried is linked.
    public func verify(mfaToken: String, code: String?, recoveryCode: String?, client: String?, locale: String? = nil) async throws
        -> AccountService.Session
    {
        let token = try MFAChallengeToken(parsing: mfaToken)
        guard code != nil || recoveryCode != nil else {
            throw AccountService.ValidationFailure(problems: [
                .init(field: "code", code: "required", message: "Enter the code from your authenticator app, or a recovery code.")
            ])
        }
        // A made-up token for someone's account is refused before anything is counted: it must
        // not spend the owner's sign-in budget (the token's secret is 256 bits: nothing to guess).
        let known = try await repository.load(token.accountID)
        guard let waiting = known.mfaChallenges[token.challengeID], clock.now() < waiting.expiresAt,
            ConstantTime.equals(Array(waiting.tokenHash.utf8), Array(token.secretHash.utf8))
        else { throw IdentityError.mfaExpired }
        // The identity a link_token carried is opened first: once the session starts, it is too late to refuse.
        let waitingLink = try waiting.linkToken.map(providers.waitingIdentity)
        let check: Check = recoveryCode != nil ? .recoveryCode : .signInTOTP
        let admission = try await admit(token.accountID, check, client: client)
        // Which step the code matches is read from the state loaded above; `decide` judges it
        // again, under the stream's lock, against the state of that moment.
        let proof: AccountCommand.MFAProof =
            if let recoveryCode {
                .recoveryCode(hash: RecoveryCodes.hash(recoveryCode))
            } else {
                .totp(
                    step: known.totp.flatMap {
                        TOTPCodes.matchingStep(code ?? "", secret: $0.secret, at: clock.now(), policy: environment.policies)
                    })
            }
        let tokens = try await environment.issueTokens(now: clock.now())
        let sessionID = UUID.random()
        let after = try await settling(admission, token.accountID, check) {
            let (after, events) = try await repository.execute(token.accountID) { _ in
                .completeMFAChallenge(
                    challengeID: token.challengeID, tokenHash: token.secretHash, proof: proof,
                    session: .init(sessionID: sessionID, method: "", device: nil, tokens: tokens.hashes, locale: locale))
            }
            guard events.contains(where: { if case .sessionStarted = $0 { true } else { false } }) else {
                if after.mfaChallenges[token.challengeID] == nil { throw IdentityError.mfaExpired }
                let failures = after.mfaChallenges[token.challengeID]?.failures ?? 0
                throw IdentityError.incorrectCode(attemptsRemaining: max(0, environment.policies.mfaMaxFailures - failures))
            }
            return after
        }
        try await succeeded(admission)
        let session = try await environment.session(after, sessionID, tokens)
        if let waitingLink { try await providers.link(waitingLink, to: session) }
        return session
    }

    /// "Verify it's you" by a TOTP code: a grant for `session`.
    public func reauth(_ session: SessionRef, code: String, client: String?) async throws -> ReauthGrantToken {
        let check = Check.reauthTOTP(sessionID: session.sessionID)
        let issued = try environment.issueReauthGrant(method: .totp)
        let admission = try await admit(session.accountID, check, client: client)
        let after = try await settling(admission, session.accountID, check) {
            let state = try await repository.load(session.accountID)
            let step = state.totp.flatMap { TOTPCodes.matchingStep(code, secret: $0.secret, at: clock.now(), policy: environment.policies) }
            do {
                return try await repository.execute(session.accountID) { _ in
                    .grantReauthByTOTP(sessionID: session.sessionID, issued.grant, step: step)
                }.0
            } catch let error as IdentityError where error.code == .incorrectCode {
                let failure = AccountCommand.recordReauthFailure(sessionID: session.sessionID, method: .totp)
                _ = try await repository.execute(session.accountID) { _ in failure }
                throw error
            }
        }
        try await succeeded(admission)
        return ReauthGrantToken(token: issued.token, grantID: issued.grant.grantID, in: after)
    }

    /// What a code is checked for, which decides the day it counts against.
    enum Check {
        /// A TOTP code finishing a sign-in: the account's day.
        case signInTOTP
        /// A TOTP code for a re-auth grant: the session's own day, so a stolen session spends
        /// its budget, never the owner's sign-ins.
        case reauthTOTP(sessionID: UUID)
        /// A recovery code (60 random bits): a wrong one spends the account's day, so the owner
        /// is told of a guesser, but the day never refuses one, which would only close the
        /// owner's last way in.
        case recoveryCode
        /// An enrolment's first code (the caller made its secret): no day.
        case enrolment
    }

    /// The day a check counts against, if any.
    func day(_ accountID: UUID, _ check: Check) -> LoginThrottle.Key? {
        switch check {
        case .signInTOTP: environment.throttle.key(secondFactorOf: accountID)
        case .recoveryCode: environment.throttle.key(recoveryCodesOf: accountID)
        case .reauthTOTP(let sessionID): environment.throttle.key(secondFactorOfSession: sessionID)
        case .enrolment: nil
        }
    }

    /// One code check counted before it is made: against the client, the day its `check`
    /// counts against, and, for a signed-in session's checks, the account's 15-minute re-auth
    /// lockout. A sign-in's checks leave that lockout alone: whoever knows only the password
    /// could otherwise keep it shut, and with it the owner's recovery codes and password
    /// re-auths; a challenge ends after 5 wrong answers, and TOTP codes have their day.
    func admit(_ accountID: UUID, _ check: Check, client: String?) async throws -> LoginThrottle.Admission? {
        let throttle = environment.throttle
        let signedIn: LoginThrottle.Key? =
            switch check {
            case .reauthTOTP, .enrolment: throttle.key(reauthOf: accountID)
            case .signInTOTP, .recoveryCode: nil
            }
        return try await environment.admit([day(accountID, check), signedIn, client.map { throttle.key(address: $0) }])
    }

    /// Runs what follows a check's admission. Every refusal (a wrong code, a challenge that
    /// ended meanwhile, a session gone) settles it as a failure: an attempt refused some other
    /// way must not leave the day's counter full but never locked, which would skip the owner's
    /// alert. The check's own error is the answer. A database failure stays counted but settles
    /// nothing: an outage must not lock the owner's day, nor tell them of a guesser.
    func settling<T>(
        _ admission: LoginThrottle.Admission?, _ accountID: UUID, _ check: Check, _ body: () async throws -> T
    ) async throws -> T {
        do {
            return try await body()
        } catch let refusal as IdentityError {
            try? await failed(admission, accountID, check)
            throw refusal
        }
    }

    /// A wrong code stays counted. The one that spends the day's limit is on the account's
    /// history, which tells the owner (`mfa.daily_limit_reached`): someone holds their password,
    /// or one of their sessions, and is guessing codes.
    func failed(_ admission: LoginThrottle.Admission?, _ accountID: UUID, _ check: Check) async throws {
        guard let admission else { return }
        let lockouts = try await environment.throttle.failed(admission, now: clock.now())
        guard let day = day(accountID, check), let until = lockouts[day] else { return }
        let sessionID: UUID? = if case .reauthTOTP(let sessionID) = check { sessionID } else { nil }
        _ = try await repository.execute(accountID) { _ in .recordMFADailyLimit(until: until, sessionID: sessionID) }
    }

    func succeeded(_ admission: LoginThrottle.Admission?) async throws {
        if let admission { try await environment.throttle.succeeded(admission) }
    }
}
