import Foundation

extension AccountState {
    /// The account's TOTP (RFC 6238) secret and where its use stands.
    public struct TOTPState: Sendable, Equatable {
        /// The HMAC key, as the authenticator app holds it (its UTF-8 bytes are the key).
        public var secret: String
        /// Confirmed by a first code: sign-ins step up, and `totp` re-authenticates.
        public var enabled: Bool
        /// The latest time step a code was accepted for: that one and every earlier one are spent.
        public var lastUsedStep: Int64?
        /// The session that began the enrolment: only it confirms it.
        public var enrolledBy: UUID?
        /// Where `mfa.totp_enabled` and the last recovery codes issued came from: their stream
        /// version, session and time, judged by a revert's span exactly as a sign-in method's
        /// origin (codes an intruder regenerated make the factor theirs too).
        public var enabledOrigin: MethodOrigin?
        public var recoveryCodesOrigin: MethodOrigin?

        public init(
            secret: String, enabled: Bool, lastUsedStep: Int64?, enrolledBy: UUID? = nil, enabledOrigin: MethodOrigin? = nil,
            recoveryCodesOrigin: MethodOrigin? = nil
        ) {
            self.secret = secret
            self.enabled = enabled
            self.lastUsedStep = lastUsedStep
            self.enrolledBy = enrolledBy
            self.enabledOrigin = enabledOrigin
            self.recoveryCodesOrigin = recoveryCodesOrigin
        }
    }

    /// A sign-in that proved its first factor and waits for the second.
    public struct MFAChallenge: Sendable, Equatable {
        public var id: UUID
        /// SHA-256 (hex) of the `mfa_token`'s secret part.
        public var tokenHash: String
        public var method: String
        public var device: String?
        public var expiresAt: Date
        public var failures: Int
        public var linkToken: String?
        /// The device the sign-in came from.
        public var deviceID: UUID?
        /// The refresh token a provider sign-in fetched, kept once the challenge is passed, and
        /// its revocation parked in the outbox meanwhile.
        public var providerToken: ProviderToken?
        public var parkedRevocationID: UUID?

        public init(
            id: UUID, tokenHash: String, method: String, device: String?, expiresAt: Date, failures: Int, linkToken: String?,
            deviceID: UUID? = nil, providerToken: ProviderToken? = nil, parkedRevocationID: UUID? = nil
        ) {
            self.id = id
            self.tokenHash = tokenHash
            self.method = method
            self.device = device
            self.expiresAt = expiresAt
            self.failures = failures
            self.linkToken = linkToken
            self.deviceID = deviceID
            self.providerToken = providerToken
            self.parkedRevocationID = parkedRevocationID
        }
    }

    /// Whether sign-ins need a second factor.
    public var isTOTPEnabled: Bool { totp?.enabled == true }

    /// The event that spends a right second factor; nil when it is wrong: a TOTP step not
    /// later than the last one used (a replay), or a recovery code not (or no longer) the account's.
    func secondFactor(_ proof: AccountCommand.MFAProof) -> AccountEvent? {
        switch proof {
        case .totp(let step):
            guard let step, step > (totp?.lastUsedStep ?? .min) else { return nil }
            return .totpCodeUsed(.init(step: step))
        case .recoveryCode(let hash):
            guard recoveryCodeHashes.contains(hash) else { return nil }
            return .recoveryCodeUsed(.init(codeHash: hash))
        }
    }
}
