import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerWebAuthn
import Logging

/// Passkeys (docs/passkeys.md): registration with re-auth, discoverable sign-in, re-auth, the
/// list, renaming and removal. The relying party's checks are `LedgerWebAuthn`'s; this service
/// spends each challenge before anything is checked, finds the passkey's account, and leaves
/// the account's rules (re-auth, the last-method guard, the counter) to `decide`.
public struct PasskeyService: Sendable {
    let environment: AccountsEnvironment
    /// Who checks the ceremonies: `LEDGER_WEBAUTHN_RP_ID` and `LEDGER_WEBAUTHN_ORIGINS`.
    public let relyingParty: RelyingParty
    /// The name authenticators show beside the passkey (`rp.name`).
    public let relyingPartyName: String
    let challenges: PasskeyChallenges
    let spent: any SpentChallenges
    let logger: Logger
    var repository: any AccountRepository { environment.repository }
    var clock: any LedgerClock { environment.clock }

    /// The algorithms offered, in order of preference (COSE: ES256, EdDSA, RS256).
    public static let algorithms: [COSEAlgorithm] = [.es256, .edDSA, .rs256]
    /// The name a passkey gets when the registration names none.
    public static let defaultName = "Passkey"

    public init(
        environment: AccountsEnvironment, relyingParty: RelyingParty, relyingPartyName: String, challenges: PasskeyChallenges,
        spent: any SpentChallenges, logger: Logger = Logger(label: "ledger.passkeys")
    ) {
        self.environment = environment
        self.relyingParty = relyingParty
        self.relyingPartyName = relyingPartyName
        self.challenges = challenges
        self.spent = spent
        self.logger = logger
    }

    /// A credential an authenticator already holds (`excludeCredentials`, `allowCredentials`).
    public struct CredentialDescriptor: Sendable, Equatable {
        /// base64url.
        public let id: String
        public let transports: [String]
    }

    /// What `navigator.credentials.create` needs, before rendering as
    /// PublicKeyCredentialCreationOptionsJSON.
    public struct RegistrationOptions: Sendable, Equatable {
        public let challenge: [UInt8]
        public let userHandle: [UInt8]
        public let userName: String
        public let userDisplayName: String
        public let excludeCredentials: [CredentialDescriptor]
        public let timeout: Int
    }

    /// What `navigator.credentials.get` needs: a challenge and, for re-auth, the account's passkeys.
    public struct RequestOptions: Sendable, Equatable {
        public let challenge: [UInt8]
        public let allowCredentials: [CredentialDescriptor]
        public let timeout: Int
    }

    /// A registration's options, for a session holding a grant (`add_method`). The user handle
    /// is the account's, or a new random one its first registration will keep.
    public func registrationOptions(_ session: SessionRef, reauthToken: String?) async throws -> RegistrationOptions {
        let state = try await repository.load(session.accountID)
        guard state.exists, !state.isDeleted else { throw IdentityError.sessionExpired }
        try state.requireReauth(
            .addMethod, sessionID: session.sessionID, tokenHash: reauthToken.map(ReauthGrantToken.hash), now: clock.now())
        guard state.passkeys.count < maximumPasskeys else { throw IdentityError.passkeyLimit }
        let handle = try state.passkeyUserHandle.flatMap(Base64URL.decode) ?? SecureRandom.bytes(32)
        let name = state.email ?? state.phone ?? state.handle ?? PublicUserID(accountID: state.accountID).description
        return RegistrationOptions(
            challenge: try challenges.issue(.registration, sessionID: session.sessionID, userHandle: handle, now: clock.now()),
            userHandle: handle, userName: name, userDisplayName: state.displayName ?? name,
            excludeCredentials: state.passkeysByAge.map { .init(id: $0.credentialID, transports: $0.transports) },
            timeout: Int(challenges.lifetime * 1000))
    }

    /// Registers the passkey of a registration response answering this session's options
    /// (re-auth `add_method`, again: the grant may have ended since). `400 invalid_credential`
    /// (`IdentityError.invalidCredential`) for any check the response fails.
    public func register(_ session: SessionRef, reauthToken: String?, credential: RegistrationResponseJSON, name: String?) async throws
        -> AccountState.Passkey
    {
        let name = try Self.validName(name) ?? Self.defaultName
        let opened = try await spend(
            { try credential.clientData() }, purpose: .registration, sessionID: session.sessionID)
        guard let handle = opened.userHandle else { throw IdentityError.invalidCredential }
        let verified = try refusing("registration", of: session.accountID) {
            () throws(WebAuthnError) -> VerifiedRegistration in
            try relyingParty.verifyRegistration(credential, challenge: opened.challenge)
        }
        let passkeyID = UUID.random()
        let passkey = AccountEvent.PasskeyRegistered(
            passkeyID: passkeyID, credentialID: Base64URL.encode(verified.credentialID), publicKey: Base64URL.encode(verified.publicKey),
            algorithm: verified.algorithm.rawValue, signCount: Int64(verified.signCount), name: name,
            userHandle: Base64URL.encode(handle), backupEligible: verified.backupEligible, backedUp: verified.backedUp,
            transports: Array(verified.transports.prefix(8).map { String($0.prefix(32)) }), attestationFormat: verified.attestationFormat,
            sessionID: session.sessionID)
        let (state, _) = try await repository.execute(session.accountID) { _ in
            .registerPasskey(passkey, sessionID: session.sessionID, reauthTokenHash: reauthToken.map(ReauthGrantToken.hash))
        }
        guard let registered = state.passkeys[passkeyID] else { throw IdentityError.invalidCredential }
        return registered
    }

    /// The account's passkeys, oldest first.
    public func list(_ session: SessionRef) async throws -> [AccountState.Passkey] {
        try await repository.load(session.accountID).passkeysByAge
    }

    /// Renames a passkey (no re-auth); `422` for an empty or too long name.
    public func rename(_ session: SessionRef, passkeyID: UUID, name: String) async throws -> AccountState.Passkey {
        let name = try Self.validName(name) ?? { throw Self.nameRequired }()
        let (state, _) = try await repository.execute(session.accountID) { _ in .renamePasskey(passkeyID: passkeyID, name: name) }
        guard let passkey = state.passkeys[passkeyID] else { throw IdentityError.passkeyNotFound }
        return passkey
    }

    /// Removes a passkey: `409 last_method` when it is the only way in (before re-auth), then
    /// re-auth (`manage_passkeys`). Returns the account after.
    public func remove(_ session: SessionRef, passkeyID: UUID, reauthToken: String?) async throws -> AccountState {
        try await repository.execute(session.accountID) { _ in
            .removePasskey(passkeyID: passkeyID, sessionID: session.sessionID, reauthTokenHash: reauthToken.map(ReauthGrantToken.hash))
        }.0
    }

    /// A sign-in's options: discoverable credentials only (`allowCredentials` empty: the person
    /// picks the account on the device), so they say nothing about any account.
    public func signInOptions() throws -> RequestOptions {
        RequestOptions(
            challenge: try challenges.issue(.signIn, now: clock.now()), allowCredentials: [], timeout: Int(challenges.lifetime * 1000))
    }

    /// Signs in with an assertion of a passkey: the session, with no second factor asked (the
    /// passkey's user verification is one). Every refusal is `401 invalid_credential`, counted
    /// against the client before the lookup like a wrong password; a counter that did not grow
    /// is recorded (`passkey.suspect`, the owner told) and refused.
    public func signIn(
        credential: AuthenticationResponseJSON, device: String?, client: String?, deviceToken: String? = nil, locale: String? = nil
    ) async throws -> AccountService.Session {
        let throttle = environment.throttle
        let admission = try await environment.admit([client.map { throttle.key(address: $0) }])
        do {
            let session = try await verifiedSignIn(credential, device: device, deviceToken: deviceToken, locale: locale)
            try await throttle.succeeded(admission)
            return session
        } catch let error as IdentityError where error.code == .invalidCredential {
            _ = try await throttle.failed(admission, now: clock.now())
            throw error
        }
    }

    private func verifiedSignIn(
        _ credential: AuthenticationResponseJSON, device: String?, deviceToken: String?, locale: String?
    ) async throws -> AccountService.Session {
        let opened = try await spend({ try credential.clientData() }, purpose: .signIn, sessionID: nil)
        let (state, passkey, verified) = try await verifyAssertion(
            credential, challenge: opened.challenge, in: nil, requiringUserHandle: true)
        let tokens = try await environment.issueTokens(now: clock.now())
        let sessionID = UUID.random()
        let deviceID = environment.deviceID(presented: deviceToken, of: state.accountID)
        let assertion = AccountCommand.PasskeyAssertion(
            passkeyID: passkey.id, signCount: Int64(verified.signCount), backedUp: verified.backedUp)
        let (after, events) = try await repository.execute(state.accountID) { _ in
            .signInWithPasskey(
                assertion,
                session: .init(
                    sessionID: sessionID, method: SignInMethod.passkey.rawValue, device: device, tokens: tokens.hashes, deviceID: deviceID,
                    locale: locale))
        }
        guard events.contains(where: { if case .sessionStarted = $0 { true } else { false } }) else {
            throw IdentityError.invalidCredential
        }
        return try await environment.session(after, sessionID, tokens)
    }

    /// Re-auth options: the account's passkeys; `404` when it has none.
    public func reauthOptions(_ session: SessionRef) async throws -> RequestOptions {
        let state = try await repository.load(session.accountID)
        guard !state.passkeys.isEmpty else { throw IdentityError(.notFound, "This account has no passkey.") }
        return RequestOptions(
            challenge: try challenges.issue(.reauth, sessionID: session.sessionID, now: clock.now()),
            allowCredentials: state.passkeysByAge.map { .init(id: $0.credentialID, transports: $0.transports) },
            timeout: Int(challenges.lifetime * 1000))
    }

    /// "Verify it's you" by an assertion of one of the account's passkeys, answering this
    /// session's re-auth options: a grant. Refusals are `401 invalid_credential`, counted
    /// against the session and the client before anything is checked (not the account: see
    /// `LoginThrottle.key(passkeyReauthOfSession:)`).
    public func reauth(_ session: SessionRef, credential: AuthenticationResponseJSON, client: String?) async throws -> ReauthGrantToken {
        let throttle = environment.throttle
        let admission = try await environment.admit(
            [throttle.key(passkeyReauthOfSession: session.sessionID), client.map { throttle.key(address: $0) }])
        do {
            let opened = try await spend({ try credential.clientData() }, purpose: .reauth, sessionID: session.sessionID)
            let (_, passkey, verified) = try await verifyAssertion(
                credential, challenge: opened.challenge, in: session.accountID, requiringUserHandle: false)
            let issued = try environment.issueReauthGrant(method: .passkey)
            let assertion = AccountCommand.PasskeyAssertion(
                passkeyID: passkey.id, signCount: Int64(verified.signCount), backedUp: verified.backedUp)
            let (after, events) = try await repository.execute(session.accountID) { _ in
                .grantReauthByPasskey(sessionID: session.sessionID, issued.grant, assertion)
            }
            guard events.contains(where: { if case .reauthGranted = $0 { true } else { false } }) else {
                throw IdentityError.invalidCredential
            }
            try await throttle.succeeded(admission)
            return ReauthGrantToken(token: issued.token, grantID: issued.grant.grantID, in: after)
        } catch let error as IdentityError where error.code == .invalidCredential {
            _ = try await throttle.failed(admission, now: clock.now())
            _ = try? await repository.execute(session.accountID) { _ in
                .recordReauthFailure(sessionID: session.sessionID, method: .passkey)
            }
            throw error
        }
    }

    /// A challenge answered: read from the client data, opened for `purpose` and `sessionID`,
    /// and spent before anything else is checked, so its first answer is its only one, accepted
    /// or refused, wherever the answers arrive. A forged or expired one writes nothing.
    private func spend(
        _ clientData: () throws -> CollectedClientData, purpose: PasskeyChallenges.Purpose, sessionID: UUID?
    ) async throws -> (challenge: [UInt8], userHandle: [UInt8]?) {
        let challenge: [UInt8]
        do {
            challenge = try clientData().challenge
        } catch {
            throw IdentityError.invalidCredential
        }
        guard !challenge.isEmpty, challenge.count <= 256 else { throw IdentityError.invalidCredential }
        let now = clock.now()
        // Opened first (an HMAC), so only a challenge this service issued costs a write; then
        // spent until it would have expired (the sweep clears it after).
        guard let opened = challenges.open(challenge, purpose: purpose, sessionID: sessionID, now: now),
            try await spent.spend(SHA256.hash(challenge), expiresAt: opened.expiresAt)
        else { throw IdentityError.invalidCredential }
        return (challenge, opened.userHandle)
    }

    /// The passkey an assertion names, checked with its stored key and counter. `accountID`:
    /// the account it must belong to (re-auth); nil: whichever holds it (sign-in, where the
    /// discoverable credential must name its user: §7.2 step 6). A counter that did not grow is
    /// handed to `decide`, which records it as suspect.
    private func verifyAssertion(
        _ credential: AuthenticationResponseJSON, challenge: [UInt8], in accountID: UUID?, requiringUserHandle: Bool
    ) async throws -> (AccountState, AccountState.Passkey, VerifiedAssertion) {
        let credentialID: [UInt8]
        do {
            credentialID = try credential.credentialID()
        } catch {
            throw IdentityError.invalidCredential
        }
        guard let owner = try await repository.passkeyOwner(credentialID: Base64URL.encode(credentialID)),
            accountID == nil || owner.accountID == accountID
        else { throw IdentityError.invalidCredential }
        let state = try await repository.load(owner.accountID)
        guard let passkey = state.passkeys[owner.passkeyID], passkey.credentialID == Base64URL.encode(credentialID),
            let publicKey = Base64URL.decode(passkey.publicKey)
        else { throw IdentityError.invalidCredential }
        do {
            let verified = try relyingParty.verifyAssertion(
                credential, challenge: challenge, publicKey: publicKey, storedSignCount: UInt32(clamping: passkey.signCount))
            // §7.2 step 6: a user handle, when the authenticator returns one (always, for a
            // discoverable sign-in), is the account's.
            if let handle = verified.userHandle, Base64URL.encode(handle) != state.passkeyUserHandle {
                throw WebAuthnError(.credential, "the user handle is not the passkey's account's")
            }
            if requiringUserHandle, verified.userHandle == nil {
                throw WebAuthnError(.credential, "a discoverable sign-in names no user handle")
            }
            // §7.2: a passkey's backup eligibility is fixed when it is made.
            if verified.backupEligible != passkey.backupEligible {
                throw WebAuthnError(.credential, "the backup-eligible flag differs from the registration's")
            }
            return (state, passkey, verified)
        } catch let error as WebAuthnError where error.code == .counter {
            // A clone's assertion: valid in every other way. `decide` sees the counter again
            // under the stream's lock and records the suspect event; the answer is a refusal.
            let presented = Base64URL.decode(credential.response.authenticatorData).flatMap { try? AuthenticatorData(bytes: $0) }
            _ = try await repository.execute(owner.accountID) { _ in
                .recordPasskeySuspect(passkeyID: passkey.id, presentedSignCount: Int64(presented?.signCount ?? 0))
            }
            throw IdentityError.invalidCredential
        } catch let error as WebAuthnError {
            logger.info("passkey assertion refused", metadata: ["reason": "\(error.code)", "account_id": "\(owner.accountID)"])
            throw IdentityError.invalidCredential
        }
    }

    /// `body`'s result; a refusal of `ceremony` is logged by its check (never its content) and
    /// answered as `invalid_credential`, whichever check it was.
    private func refusing<T>(_ ceremony: String, of accountID: UUID, _ body: () throws(WebAuthnError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            logger.info("passkey \(ceremony) refused", metadata: ["reason": "\(error.code)", "account_id": "\(accountID)"])
            throw IdentityError.invalidCredential
        }
    }

    static let nameRequired = AccountService.ValidationFailure(problems: [
        .init(field: "name", code: "required", message: "Enter a name for this passkey.")
    ])

    /// A name as stored: trimmed; nil when none was given. `422` when it is empty, longer than
    /// `maximumPasskeyNameLength` scalars, or holds control or format characters (line breaks,
    /// bidi overrides, zero-width marks: a name that reads as something else).
    static func validName(_ raw: String?) throws -> String? {
        guard let raw else { return nil }
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw nameRequired }
        let hidden: Set<Unicode.GeneralCategory> = [.control, .format, .lineSeparator, .paragraphSeparator]
        guard name.unicodeScalars.count <= maximumPasskeyNameLength,
            !name.unicodeScalars.contains(where: { hidden.contains($0.properties.generalCategory) })
        else {
            throw AccountService.ValidationFailure(problems: [
                .init(
                    field: "name", code: "invalid_name",
                    message: "Use at most \(maximumPasskeyNameLength) characters, without line breaks or invisible characters.")
            ])
        }
        return name
    }
}
