import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Phone codes: request, verify, cancel (docs/architecture.md "Phone and OTP"), for every purpose.
public struct OTPService: Sendable {
    public typealias ValidationFailure = AccountService.ValidationFailure
    let otps: any OTPRepository
    let environment: AccountsEnvironment
    /// Keys the codes' HMACs, so a leaked event or row does not give the 6 digits away.
    let codeKey: [UInt8]
    let catalog: CountryCatalog
    var repository: any AccountRepository { environment.repository }
    var clock: any LedgerClock { environment.clock }
    /// The codes' TTL, attempts, resends and caps.
    var policy: OTPPolicy { environment.policies.otp }

    public init(otps: any OTPRepository, environment: AccountsEnvironment, codeKey: [UInt8], catalog: CountryCatalog = .standard) {
        self.otps = otps
        self.environment = environment
        self.codeKey = codeKey
        self.catalog = catalog
    }

    /// A code on its way: `202 {request_id, expires_in, resend_after}`.
    public struct Requested: Sendable, Equatable {
        public let requestID: UUID
        public let expiresIn: Int
        public let resendAfter: Int
    }

    /// What a right code gives, by purpose.
    public enum Outcome: Sendable {
        /// `sign_in`: a session, and whether the account was created by it.
        case session(AccountService.Session, created: Bool)
        /// `add_phone`, `change_phone`: the account after the change (the hub).
        case account(AccountState)
        /// `reauth`: a grant for the session.
        case reauth(ReauthGrantToken)
    }

    /// Sends a code for `purpose`. `phone` is what the user typed for `country` (ISO), or an
    /// international number when `country` is nil; for `reauth` it may be omitted (the
    /// account's own number is used). Signed-in purposes need `session`; `add_phone` needs a
    /// re-auth grant, and so does `change_phone` unless the phone is the account's only sign-in
    /// method (both checked here and again when the code is verified). `client` is the caller
    /// as per-client limits count it; a request whose answer could tell whether the number is
    /// registered counts as a lookup (`RequestLimits`) before it looks.
    public func request(
        phone rawPhone: String?, country: String?, purpose rawPurpose: String, session: SessionRef?, reauthToken: String?,
        client: String?, locale: String? = nil
    ) async throws -> Requested {
        guard let purpose = OTPPurpose(rawValue: rawPurpose) else {
            // Every rule the input breaks, not only the first.
            let phoneUnreadable = rawPhone.map { (try? parse($0, country: country)) == nil } ?? false
            throw ValidationFailure(problems: [Self.invalidPurpose] + (phoneUnreadable ? [Self.invalidPhone] : []))
        }
        var phone = try rawPhone.map { try parse($0, country: country) }
        try checkTextable(phone)
        let now = clock.now()
        let requestID = UUID.random()
        var accountID: UUID
        if let session {
            accountID = session.accountID
        } else {
            guard !purpose.needsSession else { throw IdentityError.signInRequired }
            guard let phone else { throw ValidationFailure(problems: [Self.invalidPhone]) }
            // The answer may be `signup_cooldown`: a lookup.
            try await environment.admit(.lookup, client: client, accountID: nil)
            if let owner = try await repository.phoneOwner(phone.e164) {
                accountID = owner
            } else {
                try await environment.checkCooldown(.phone(phone.e164))
                accountID = UUID.random()
            }
        }
        if purpose.needsSession, let session {
            let state = try await repository.load(session.accountID)
            phone = try checkSignedIn(purpose, phone: phone, state: state, session: session, reauthToken: reauthToken, now: now)
            if let phone, purpose == .addPhone || purpose == .changePhone {
                try await environment.admit(.lookup, client: client, accountID: state.accountID)
                try await environment.checkClaimable(
                    .phone(phone.e164), owner: try await repository.phoneOwner(phone.e164), claimant: state.accountID,
                    taken: ClaimTaken(claim: .phone))
            }
            accountID = state.accountID
        }
        guard let phone else { throw ValidationFailure(problems: [Self.invalidPhone]) }
        // The account's own number (re-auth) may be from a country the operator stopped texting.
        try checkTextable(phone)
        let code = String(format: "%06d", try SecureRandom.uniform(below: 1_000_000))
        let issued = OTPEvent.Issued(
            accountID: accountID, sessionID: purpose.needsSession ? session?.sessionID : nil, purpose: purpose,
            phone: phone.e164, region: phone.region, codeHash: codeHash(code, requestID: requestID),
            expiresAt: now.addingTimeInterval(policy.ttl), maxAttempts: policy.maxAttempts)
        // The code in the language of the request that asked for it (the phone in the person's
        // hand says it best), else `LEDGER_DEFAULT_LOCALE`.
        let message = OutboxMessage(
            channel: .sms, to: phone.e164, template: "otp", code: code,
            locale: Language.firstSupported([LanguageTag.normalize(locale)]) ?? environment.policies.defaultLanguage.rawValue,
            expiresAt: issued.expiresAt)
        let resendAfter = try await issue(requestID, issued, clientAddress: client, message: message)
        return Requested(requestID: requestID, expiresIn: Int(policy.ttl), resendAfter: resendAfter)
    }

    /// The rules of the signed-in purposes before a code is sent; returns the number to use.
    private func checkSignedIn(
        _ purpose: OTPPurpose, phone: PhoneNumber?, state: AccountState, session: SessionRef, reauthToken: String?, now: Date
    ) throws -> PhoneNumber? {
        switch purpose {
        case .signIn:
            return phone
        case .reauth:
            guard let current = state.phone, let region = state.phoneRegion else {
                throw IdentityError(.noPhone, "Add a phone number first.")
            }
            // A valid number that is not the account's: saying "not valid" would mislead.
            if let phone, phone.e164 != current { throw ValidationFailure(problems: [Self.notAccountPhone]) }
            return PhoneNumber(e164: current, region: region)
        case .addPhone:
            guard state.phone == nil else { throw IdentityError(.phoneExists, "You already have a phone number. Change it instead.") }
            try state.requireReauth(
                .addMethod, sessionID: session.sessionID, tokenHash: reauthToken.map(ReauthGrantToken.hash), now: now)
            return phone
        case .changePhone:
            guard state.phone != nil else { throw IdentityError(.noPhone, "Add a phone number first.") }
            try state.requireReauth(
                .changePhone, sessionID: session.sessionID, tokenHash: reauthToken.map(ReauthGrantToken.hash), now: now)
            if let phone, phone.e164 == state.phone {
                throw ValidationFailure(problems: [.init(field: "phone", code: "same_as_current", message: "This is already your number.")])
            }
            return phone
        }
    }

    /// Checks a code and does what its purpose says, atomically with marking it used.
    public func verify(
        requestID rawRequestID: String, code: String, session: SessionRef?, reauthToken: String?, device: String?,
        linkToken: String? = nil, deviceToken: String? = nil, locale: String? = nil
    ) async throws -> Outcome {
        guard code.count == 6, code.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw ValidationFailure(problems: [.init(field: "code", code: "invalid_code", message: "Enter the 6-digit code.")])
        }
        guard let requestID = UUID(uuidString: rawRequestID) else { throw IdentityError.codeExpired }
        let pending = try await environment.pendingSignIn(linkToken: linkToken)
        let reauth = try environment.issueReauthGrant(method: .phone)
        let reauthTokenHash = reauthToken.map(ReauthGrantToken.hash)
        let devices = environment.devices
        let newDevice = UUID.random()
        let command: @Sendable (OTPEvent.Issued, Date, AccountState) throws -> AccountCommand = { issued, issuedAt, state in
            let phone = PhoneNumber(e164: issued.phone, region: issued.region)
            let deviceID = state.exists ? devices.deviceID(in: deviceToken, of: state.accountID) ?? newDevice : newDevice
            let newSession = pending.newSession(method: "phone", device: device, deviceID: deviceID, locale: locale)
            switch issued.purpose {
            case .signIn:
                return state.exists
                    ? .startSession(newSession, proof: .phone(issued.phone, issuedAt: issuedAt))
                    : .registerByPhone(
                        .init(
                            phone: phone, requestID: requestID,
                            handle: Handle.randomTemporary(), session: newSession))
            case .addPhone:
                return .linkPhone(
                    phone, requestID: requestID, sessionID: issued.sessionID ?? UUID.random(), reauthTokenHash: reauthTokenHash)
            case .changePhone:
                return .changePhone(
                    phone, requestID: requestID, sessionID: issued.sessionID ?? UUID.random(), reauthTokenHash: reauthTokenHash)
            case .reauth:
                return .grantReauth(sessionID: issued.sessionID ?? UUID.random(), reauth.grant)
            }
        }
        let presented = codeHash(code, requestID: requestID)
        var verification: OTPVerification
        do {
            verification = try await check(requestID, presentedCodeHash: presented, sessionID: session?.sessionID, command: command)
        } catch let taken as ClaimTaken where taken.claim == .phone || taken.claim == .handle {
            // Two new sign-ins by one number raced (the other one now owns it), or a generated
            // handle collided: once more, now signing in to the owner.
            verification = try await check(requestID, presentedCodeHash: presented, sessionID: session?.sessionID, command: command)
        }
        if let error = verification.verdict.error { throw error }
        guard let state = verification.account else { throw IdentityError.codeExpired }
        if verification.accountEvents.contains(where: { if case .reauthGranted = $0 { return true } else { return false } }) {
            return .reauth(ReauthGrantToken(token: reauth.token, grantID: reauth.grant.grantID, in: state))
        }
        let events = verification.accountEvents
        if PendingSignIn.isChallenged(events) || events.contains(where: { if case .sessionStarted = $0 { true } else { false } }) {
            let created = events.contains { if case .registered = $0 { return true } else { return false } }
            return .session(try await pending.session(state, events, environment: environment), created: created)
        }
        return .account(state)
    }

    /// Back navigation: the code can no longer be used.
    public func cancel(requestID rawRequestID: String, session: SessionRef?) async throws {
        guard let requestID = UUID(uuidString: rawRequestID) else { throw IdentityError(.notFound, "No such code request.") }
        try await cancel(requestID, sessionID: session?.sessionID)
    }

    /// HMAC-SHA256 (hex) of the request id and the code.
    func codeHash(_ code: String, requestID: UUID) -> String {
        Hex.encode(HMACSHA256.authenticate(key: codeKey, message: requestID.bytes + Array(code.utf8)))
    }

    /// A typed number for a picked region, or an international one.
    func parse(_ raw: String, country: String?) throws -> PhoneNumber {
        let parsed: PhoneNumber?
        if let country {
            parsed = catalog.country(iso: country).flatMap { PhoneNumber(raw, country: $0) }
        } else {
            parsed = PhoneNumber(international: raw, catalog: catalog)
        }
        guard let parsed else { throw ValidationFailure(problems: [Self.invalidPhone]) }
        return parsed
    }

    /// Refuses a number of a country codes are not sent to (`OTPPolicy.allowedRegions`).
    private func checkTextable(_ phone: PhoneNumber?) throws {
        guard let phone, let allowed = policy.allowedRegions, !allowed.contains(phone.region) else { return }
        throw ValidationFailure(problems: [Self.unsupportedCountry])
    }

    static let unsupportedCountry = ValidationFailure.Problem(
        field: "phone", code: "unsupported_country", message: "We can't send codes to numbers from this country.")
    static let invalidPhone = ValidationFailure.Problem(field: "phone", code: "invalid_phone", message: "Enter a valid phone number.")
    static let notAccountPhone = ValidationFailure.Problem(
        field: "phone", code: "not_account_phone", message: "Enter the phone number on your account.")
    static let invalidPurpose = ValidationFailure.Problem(
        field: "purpose", code: "invalid_purpose", message: "Use sign_in, add_phone, change_phone or reauth.")
}
