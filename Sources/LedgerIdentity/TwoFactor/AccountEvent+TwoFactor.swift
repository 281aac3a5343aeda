import Foundation

extension AccountEvent {
    /// A TOTP enrolment began: the secret the authenticator app scans, not in force until a
    /// first code confirms it. Sealed with the account's data key like every payload; the feed
    /// and exports leave `totp_secret` out.
    public struct TOTPEnrolmentStarted: Codable, Sendable, Equatable {
        public var secret: String
        /// The session that began it: only that one confirms it.
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey { case secret = "totp_secret", sessionID = "session_id" }

        public init(secret: String, sessionID: UUID? = nil) {
            self.secret = secret
            self.sessionID = sessionID
        }
    }

    /// TOTP is on, with the SHA-256 (hex) of each new recovery code.
    public struct TOTPEnabled: Codable, Sendable, Equatable {
        public var recoveryCodeHashes: [String]
        /// The session that confirmed it (nil in events written before it was recorded): what a
        /// revert's span reads, as for sign-in methods.
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey { case recoveryCodeHashes = "recovery_codes_sha256", sessionID = "session_id" }

        public init(recoveryCodeHashes: [String], sessionID: UUID? = nil) {
            self.recoveryCodeHashes = recoveryCodeHashes
            self.sessionID = sessionID
        }
    }

    /// TOTP is off; the secret and the recovery codes are gone.
    public struct TOTPDisabled: Codable, Sendable, Equatable {
        /// Why, when not the person's choice: `email_reverted`, `address_proven`.
        public var reason: String?
        /// True when what went was an enrolment never confirmed (TOTP was not on): a revert or a
        /// reset drops it, but did not reset two-step verification.
        public var pending: Bool?

        public init(reason: String? = nil, pending: Bool? = nil) {
            self.reason = reason
            self.pending = pending
        }

        /// Whether two-step verification that was on went off.
        public var turnedOff: Bool { pending != true }
    }

    /// New recovery codes; the old ones are void.
    public struct RecoveryCodesRegenerated: Codable, Sendable, Equatable {
        public var recoveryCodeHashes: [String]
        /// The session that replaced them (nil in events written before it was recorded): codes
        /// an intruder took make the factor theirs, so a revert's span reads this.
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey { case recoveryCodeHashes = "recovery_codes_sha256", sessionID = "session_id" }

        public init(recoveryCodeHashes: [String], sessionID: UUID? = nil) {
            self.recoveryCodeHashes = recoveryCodeHashes
            self.sessionID = sessionID
        }
    }

    /// A TOTP code of time step `step` (Unix time / 30) was accepted: no code of that step or
    /// an earlier one is accepted again.
    public struct TOTPCodeUsed: Codable, Sendable, Equatable {
        public var step: Int64

        public init(step: Int64) {
            self.step = step
        }
    }

    /// A recovery code (by hash) was used up.
    public struct RecoveryCodeUsed: Codable, Sendable, Equatable {
        public var codeHash: String
        enum CodingKeys: String, CodingKey { case codeHash = "code_sha256" }

        public init(codeHash: String) {
            self.codeHash = codeHash
        }
    }

    /// A sign-in proved the first factor of an account with TOTP on: instead of a session, a
    /// challenge the `mfa_token` answers within its time.
    public struct MFAChallengeIssued: Codable, Sendable, Equatable {
        public var challengeID: UUID
        public var tokenHash: String
        /// How the first factor was proven (`email`, `phone`, `apple`, `google`), and from where.
        public var method: String
        public var device: String?
        public var expiresAt: Date
        /// A provider `link_token` that sign-in carried, linked once the challenge is passed.
        public var linkToken: String?
        /// The device the sign-in came from (its `device_token`'s id).
        public var deviceID: UUID?
        /// The refresh token a provider sign-in fetched (kept when the challenge is passed), and
        /// the revocation of it that waits in the outbox until then.
        public var provider: IdentityProvider?
        public var providerSubject: String?
        public var clientID: String?
        public var refreshToken: String?
        public var parkedRevocationID: UUID?
        enum CodingKeys: String, CodingKey {
            case challengeID = "challenge_id", tokenHash = "token_sha256", method, device, expiresAt = "expires_at"
            case linkToken = "link_token", deviceID = "device_id", provider, providerSubject = "provider_subject"
            case clientID = "client_id", refreshToken = "refresh_token", parkedRevocationID = "parked_revocation_id"
        }

        public init(
            challengeID: UUID, tokenHash: String, method: String, device: String?, expiresAt: Date, linkToken: String?,
            deviceID: UUID? = nil, providerToken: AccountState.ProviderToken? = nil, parkedRevocationID: UUID? = nil
        ) {
            self.challengeID = challengeID
            self.tokenHash = tokenHash
            self.method = method
            self.device = device
            self.expiresAt = expiresAt
            self.linkToken = linkToken
            self.deviceID = deviceID
            self.provider = providerToken?.provider
            self.providerSubject = providerToken?.subject
            self.clientID = providerToken?.clientID
            self.refreshToken = providerToken?.refreshToken
            self.parkedRevocationID = parkedRevocationID
        }

        /// The refresh token the sign-in fetched, if any.
        public var providerToken: AccountState.ProviderToken? {
            guard let provider, let providerSubject, let clientID, let refreshToken else { return nil }
            return .init(provider: provider, subject: providerSubject, clientID: clientID, refreshToken: refreshToken)
        }
    }

    /// A wrong code against a challenge (`failures` so far).
    public struct MFAChallengeFailed: Codable, Sendable, Equatable {
        public var challengeID: UUID
        public var failures: Int
        enum CodingKeys: String, CodingKey { case challengeID = "challenge_id", failures }

        public init(challengeID: UUID, failures: Int) {
            self.challengeID = challengeID
            self.failures = failures
        }
    }

    /// A challenge is over: `passed` (a session follows) or `too_many_failures`.
    public struct MFAChallengeEnded: Codable, Sendable, Equatable {
        public var challengeID: UUID
        public var reason: String
        enum CodingKeys: String, CodingKey { case challengeID = "challenge_id", reason }

        public init(challengeID: UUID, reason: String) {
            self.challengeID = challengeID
            self.reason = reason
        }
    }

    /// Wrong second factors reached the day's limit: TOTP codes are refused `until` then
    /// (recovery codes still work). Whoever sent them holds the password (at sign-in, `sessionID` nil)
    /// or a session (its re-auths, `sessionID` set), so the verified address is told
    /// (`two_factor_limit_reached`). Appended once a day at most: only the failure that locks
    /// the day's counter records it.
    public struct MFADailyLimitReached: Codable, Sendable, Equatable {
        public var until: Date
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey { case until, sessionID = "session_id" }

        public init(until: Date, sessionID: UUID?) {
            self.until = until
            self.sessionID = sessionID
        }
    }
}

extension AccountEvent {
    /// The two-factor area's events in the catalogue (`AccountEvent.registry`): each with its
    /// payload type and the commands whose decision appends it.
    static let twoFactorRegistrations: [Registration] = [
        .init(.totpEnrolmentStarted, TOTPEnrolmentStarted.self, AccountEvent.totpEnrolmentStarted, emittedBy: ["startTOTPEnrolment"]),
        .init(.totpEnabled, TOTPEnabled.self, AccountEvent.totpEnabled, emittedBy: ["confirmTOTP"]),
        .init(
            .totpDisabled, TOTPDisabled.self, AccountEvent.totpDisabled,
            emittedBy: ["disableTOTP", "revertEmail", "resetPassword", "support"]),
        .init(
            .recoveryCodesRegenerated, RecoveryCodesRegenerated.self, AccountEvent.recoveryCodesRegenerated,
            emittedBy: ["regenerateRecoveryCodes"]),
        .init(
            .totpCodeUsed, TOTPCodeUsed.self, AccountEvent.totpCodeUsed,
            emittedBy: ["confirmTOTP", "completeMFAChallenge", "grantReauthByTOTP"]),
        .init(.recoveryCodeUsed, RecoveryCodeUsed.self, AccountEvent.recoveryCodeUsed, emittedBy: ["completeMFAChallenge"]),
        .init(.mfaChallengeIssued, MFAChallengeIssued.self, AccountEvent.mfaChallengeIssued, emittedBy: ["startSession"]),
        .init(.mfaChallengeFailed, MFAChallengeFailed.self, AccountEvent.mfaChallengeFailed, emittedBy: ["completeMFAChallenge"]),
        .init(.mfaChallengeEnded, MFAChallengeEnded.self, AccountEvent.mfaChallengeEnded, emittedBy: ["completeMFAChallenge"]),
        .init(.mfaDailyLimitReached, MFADailyLimitReached.self, AccountEvent.mfaDailyLimitReached, emittedBy: ["recordMFADailyLimit"]),
    ]
}
