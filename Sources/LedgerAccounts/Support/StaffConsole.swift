import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerWebAuthn
import Logging

/// The console's staff (docs/support.md "The console"): invitations that register a passkey,
/// sign-in with that passkey only, 8-hour sessions held by a cookie, the passkey shown again for
/// an `admin`-role action, removal that ends every session at once. The relying party is the
/// console's own (`LEDGER_CONSOLE_ORIGIN`), and so are its challenges' key.
public struct StaffConsole: Sendable {
    let staff: any StaffRepository
    let environment: AccountsEnvironment
    /// The console's origin (`LEDGER_CONSOLE_ORIGIN`); its host is the staff passkeys' RP id.
    public let origin: String
    public let relyingParty: RelyingParty
    public let relyingPartyName: String
    let challenges: PasskeyChallenges
    let spent: any SpentChallenges
    let csrfKey: [UInt8]
    let logger: Logger
    var clock: any LedgerClock { environment.clock }

    /// How long an invitation link and a console session last.
    public static let invitationLifetime: TimeInterval = 86_400
    public static let sessionLifetime: TimeInterval = 8 * 3600

    public init(
        staff: any StaffRepository, environment: AccountsEnvironment, origin: String, relyingPartyName: String, masterKey: MasterKey,
        spent: any SpentChallenges, logger: Logger = Logger(label: "ledger.console")
    ) {
        self.staff = staff
        self.environment = environment
        self.origin = origin
        self.relyingParty = RelyingParty(id: URL(string: origin)?.host ?? "localhost", origins: [origin])
        self.relyingPartyName = relyingPartyName
        self.challenges = PasskeyChallenges(key: masterKey.derivedKey(label: KeyLabel.staffPasskeyChallenge))
        self.spent = spent
        self.csrfKey = masterKey.derivedKey(label: KeyLabel.staffCSRF)
        self.logger = logger
    }

    /// A signed-in staff member, as a console request knows them.
    public struct StaffSession: Sendable, Equatable {
        public let staffID: UUID
        public let sessionID: UUID
        public let email: String
        public let role: StaffRole
        /// The token every form of this session carries (`csrf`).
        public let csrfToken: String
        /// Who the support desk's records name.
        public var actor: SupportActor { SupportActor(staffID: staffID, operatorName: email) }
    }

    // MARK: Invitations

    /// Invites a person (`ledger staff add`): a link to register their passkey, by email, good
    /// for 24 hours. Inviting again someone who has not registered yet replaces the link.
    /// Returns the staff member's id and the link.
    public func invite(email raw: String, role: StaffRole) async throws -> (staffID: UUID, link: String) {
        guard let email = EmailAddress(raw) else { throw AccountService.ValidationFailure(problems: [AccountService.invalidEmail]) }
        let staffID = try await staff.staff(email: email.normalized) ?? UUID.random()
        let token = Base64URL.encode(try SecureRandom.bytes(32))
        let link = "\(origin)/console/invitation?token=\(token)"
        let expiresAt = clock.now().addingTimeInterval(Self.invitationLifetime)
        // A mail retried past the link's 24 hours would carry a dead link: it is dropped instead.
        // A staff member has no account to say a language: the service's (`LEDGER_DEFAULT_LOCALE`).
        let message = OutboxMessage(
            channel: .email, to: email.value, template: Self.invitationTemplate, link: link, token: token,
            locale: environment.policies.defaultLanguage.rawValue, details: ["role": role.rawValue], expiresAt: expiresAt)
        _ = try await staff.execute(staffID, outbox: [message]) { _ in
            .invite(email: email.value, role: role, invitationTokenHash: Hex.encode(SHA256.hash(Array(token.utf8))), expiresAt: expiresAt)
        }
        return (staffID, link)
    }

    /// The invitation email's template.
    public static let invitationTemplate = "staff_invitation"

    /// The staff member a live invitation token names; `invitation_expired` otherwise.
    public func invitation(token: String) async throws -> StaffState {
        guard let staffID = try await staff.staff(invitationTokenHash: SHA256.hash(Array(token.utf8))) else {
            throw StaffError.invitationExpired
        }
        let state = try await staff.load(staffID)
        guard let invitation = state.invitation, clock.now() < invitation.expiresAt, !state.isRemoved else {
            throw StaffError.invitationExpired
        }
        return state
    }

    /// The options of the passkey an invitation registers (bound to the staff member).
    public func registrationOptions(token: String) async throws -> PasskeyService.RegistrationOptions {
        let state = try await invitation(token: token)
        let handle = try SecureRandom.bytes(32)
        let name = state.email ?? "staff"
        return PasskeyService.RegistrationOptions(
            challenge: try challenges.issue(.registration, sessionID: state.staffID, userHandle: handle, now: clock.now()),
            userHandle: handle, userName: name, userDisplayName: name, excludeCredentials: [],
            timeout: Int(challenges.lifetime * 1000))
    }

    /// Registers the passkey of a registration answering the invitation's options; the
    /// invitation is used up with it.
    public func register(token: String, credential: RegistrationResponseJSON) async throws -> StaffState {
        let state = try await invitation(token: token)
        let opened = try await spend({ try credential.clientData() }, purpose: .registration, boundTo: state.staffID)
        guard let handle = opened.userHandle else { throw StaffError.invalidCredential }
        let verified = try refusing("registration") { () throws(WebAuthnError) -> VerifiedRegistration in
            try relyingParty.verifyRegistration(credential, challenge: opened.challenge)
        }
        let passkey = StaffEvent.PasskeyRegistered(
            passkeyID: UUID.random(), credentialID: Base64URL.encode(verified.credentialID),
            publicKey: Base64URL.encode(verified.publicKey),
            algorithm: verified.algorithm.rawValue, signCount: Int64(verified.signCount), userHandle: Base64URL.encode(handle))
        let tokenHash = Hex.encode(SHA256.hash(Array(token.utf8)))
        return try await staff.execute(state.staffID) { _ in .registerPasskey(passkey, invitationTokenHash: tokenHash) }.0
    }

    // MARK: Sessions

    /// Sign-in options: discoverable credentials only, so they name nobody.
    public func signInOptions() throws -> PasskeyService.RequestOptions {
        PasskeyService.RequestOptions(
            challenge: try challenges.issue(.signIn, now: clock.now()), allowCredentials: [], timeout: Int(challenges.lifetime * 1000))
    }

    /// Signs in with an assertion of a staff passkey: the session's cookie token. Refusals are
    /// `invalid_credential`, counted against the client before anything is checked.
    public func signIn(credential: AuthenticationResponseJSON, client: String?) async throws -> (token: String, session: StaffSession) {
        let throttle = environment.throttle
        let admission = try await environment.admit([client.map { throttle.key(address: "console:" + $0) }])
        do {
            let opened = try await spend({ try credential.clientData() }, purpose: .signIn, boundTo: nil)
            let (state, passkey, verified) = try await verifyAssertion(credential, challenge: opened.challenge, of: nil)
            let token = Base64URL.encode(try SecureRandom.bytes(32))
            let session = StaffCommand.NewSession(
                sessionID: UUID.random(), tokenHash: Hex.encode(SHA256.hash(Array(token.utf8))),
                expiresAt: clock.now().addingTimeInterval(Self.sessionLifetime))
            let (after, _) = try await staff.execute(state.staffID) { _ in
                .signIn(passkeyID: passkey.passkeyID, signCount: Int64(verified.signCount), session: session)
            }
            try await throttle.succeeded(admission)
            return (token, staffSession(after, sessionID: session.sessionID, token: token))
        } catch let error as StaffError where error.code == .invalidCredential {
            _ = try await throttle.failed(admission, now: clock.now())
            throw error
        }
    }

    /// The signed-in staff member a cookie token names, while the session lives and they are
    /// not removed; nil otherwise.
    public func authenticate(token: String) async throws -> StaffSession? {
        guard !token.isEmpty, token.utf8.count <= 128,
            let found = try await staff.session(tokenHash: SHA256.hash(Array(token.utf8)), at: clock.now())
        else { return nil }
        // One lookup a request (the session, live, of someone not removed), not a fold of their history.
        return staffSession(staffID: found.staffID, email: found.email, role: found.role, sessionID: found.sessionID, token: token)
    }

    /// Whether `presented` is this session's form token (constant time).
    public func checksCSRF(_ presented: String?, of session: StaffSession) -> Bool {
        guard let presented else { return false }
        return ConstantTime.equals(Array(presented.utf8), Array(session.csrfToken.utf8))
    }

    /// Options to show the passkey again, in this session (an `admin`-role action).
    public func confirmationOptions(_ session: StaffSession) async throws -> PasskeyService.RequestOptions {
        let state = try await staff.load(session.staffID)
        return PasskeyService.RequestOptions(
            challenge: try challenges.issue(.reauth, sessionID: session.sessionID, now: clock.now()),
            allowCredentials: state.passkeys.values.sorted { $0.credentialID < $1.credentialID }.map {
                .init(id: $0.credentialID, transports: [])
            },
            timeout: Int(challenges.lifetime * 1000))
    }

    /// Checks an assertion answering this session's confirmation options, of the staff
    /// member's own passkey (`staff.passkey_confirmed`).
    public func confirm(_ session: StaffSession, credential: AuthenticationResponseJSON) async throws {
        let opened = try await spend({ try credential.clientData() }, purpose: .reauth, boundTo: session.sessionID)
        let (_, passkey, verified) = try await verifyAssertion(credential, challenge: opened.challenge, of: session.staffID)
        _ = try await staff.execute(session.staffID) { _ in
            .confirmPasskey(passkeyID: passkey.passkeyID, signCount: Int64(verified.signCount), sessionID: session.sessionID)
        }
    }

    public func signOut(_ session: StaffSession) async throws {
        _ = try await staff.execute(session.staffID) { _ in .signOut(sessionID: session.sessionID) }
    }

    // MARK: The list

    /// Every staff member, removed ones included.
    public func list() async throws -> [StaffState] { try await staff.all() }

    /// Removes the staff member with this address: every session ends at once. Returns them,
    /// or nil when nobody on staff has it.
    @discardableResult
    public func remove(email raw: String) async throws -> StaffState? {
        guard let email = EmailAddress(raw), let staffID = try await staff.staff(email: email.normalized) else { return nil }
        return try await staff.execute(staffID) { _ in .remove }.0
    }

    // MARK: Parts

    func staffSession(_ state: StaffState, sessionID: UUID, token: String) -> StaffSession {
        staffSession(
            staffID: state.staffID, email: EmailAddress.normalize(state.email ?? ""), role: state.role, sessionID: sessionID, token: token)
    }

    func staffSession(staffID: UUID, email: String, role: StaffRole, sessionID: UUID, token: String) -> StaffSession {
        StaffSession(
            staffID: staffID, sessionID: sessionID, email: email, role: role,
            csrfToken: Base64URL.encode(HMACSHA256.authenticate(key: csrfKey, message: Array("csrf:\(token)".utf8))))
    }

    private func spend(
        _ clientData: () throws -> CollectedClientData, purpose: PasskeyChallenges.Purpose, boundTo: UUID?
    ) async throws -> (challenge: [UInt8], userHandle: [UInt8]?) {
        guard let challenge = try? clientData().challenge, !challenge.isEmpty, challenge.count <= 256,
            let opened = challenges.open(challenge, purpose: purpose, sessionID: boundTo, now: clock.now()),
            try await spent.spend(SHA256.hash(challenge), expiresAt: opened.expiresAt)
        else { throw StaffError.invalidCredential }
        return (challenge, opened.userHandle)
    }

    /// The staff passkey an assertion names, checked with its stored key and counter; of
    /// `staffID` when given.
    private func verifyAssertion(
        _ credential: AuthenticationResponseJSON, challenge: [UInt8], of staffID: UUID?
    ) async throws -> (StaffState, StaffEvent.PasskeyRegistered, VerifiedAssertion) {
        guard let credentialID = try? credential.credentialID(),
            let owner = try await staff.staff(credentialID: Base64URL.encode(credentialID)), staffID == nil || owner.staffID == staffID
        else { throw StaffError.invalidCredential }
        let state = try await staff.load(owner.staffID)
        guard !state.isRemoved, let passkey = state.passkeys[owner.passkeyID], let publicKey = Base64URL.decode(passkey.publicKey) else {
            throw StaffError.invalidCredential
        }
        let verified = try refusing("assertion") { () throws(WebAuthnError) -> VerifiedAssertion in
            let verified = try relyingParty.verifyAssertion(
                credential, challenge: challenge, publicKey: publicKey, storedSignCount: UInt32(clamping: passkey.signCount))
            if let handle = verified.userHandle, Base64URL.encode(handle) != passkey.userHandle {
                throw WebAuthnError(.credential, "the user handle is not the staff passkey's")
            }
            return verified
        }
        return (state, passkey, verified)
    }

    private func refusing<T>(_ ceremony: String, _ body: () throws(WebAuthnError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            logger.info("staff passkey \(ceremony) refused", metadata: ["reason": "\(error.code)"])
            throw StaffError.invalidCredential
        }
    }
}
