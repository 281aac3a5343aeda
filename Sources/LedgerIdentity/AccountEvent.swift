import Foundation
import LedgerCore

/// The catalogue of identity events on an account's stream.
///
/// Each case has a stable type name (lower snake case, dot-separated, past tense) and a
/// schema version; payloads are JSON. Older schema versions are upcast in `decode` so that
/// `evolve` only ever sees the current shape. Payloads never hold a plain token, code or
/// password: only hashes, which are sealed with the account's data key like every payload.
public enum AccountEvent: Sendable, Equatable {
    case registered(Registered)
    case passwordSet(PasswordSet)
    case emailVerificationSent(EmailLinkSent)
    case emailVerified(EmailVerified)
    case passwordResetRequested(EmailLinkSent)
    case sessionStarted(SessionStarted)
    case sessionRefreshed(SessionRefreshed)
    case sessionRevoked(SessionRevoked)
    case loginFailed(LoginFailed)
    case loginThrottled(LoginThrottled)
    case handleClaimed(HandleClaimed)
    case profileUpdated(ProfileUpdated)
    case phoneLinked(PhoneLinked)
    case phoneChanged(PhoneChanged)
    case reauthGranted(ReauthGranted)
    case reauthFailed(ReauthFailed)
    case reauthLinkSent(EmailLinkSent)
    case reauthNonceIssued(ReauthNonceIssued)
    case reauthGrantsRevoked(ReauthGrantsRevoked)
    case emailLinksRevoked(EmailLinksRevoked)
    case emailAdded(EmailAdded)
    case emailAddRequested(EmailAddRequested)
    case emailChangeRequested(EmailLinkSent)
    case emailChanged(EmailChanged)
    case emailReverted(EmailReverted)
    case providerLinked(ProviderLinked)
    case providerUnlinked(ProviderUnlinked)
    case phoneRemoved(PhoneRemoved)
    case accountDisabled(AccountDisabled)
    case accountEnabled(AccountEnabled)
    case appleNotificationReceived(AppleNotificationReceived)
    case deletionRequested(DeletionRequested)
    case emailRemoved(EmailRemoved)
    case providerTokensStored(ProviderTokensStored)
    case providerTokenRevoked(ProviderTokenRevoked)
    case totpEnrolmentStarted(TOTPEnrolmentStarted)
    case totpEnabled(TOTPEnabled)
    case totpDisabled(TOTPDisabled)
    case recoveryCodesRegenerated(RecoveryCodesRegenerated)
    case totpCodeUsed(TOTPCodeUsed)
    case recoveryCodeUsed(RecoveryCodeUsed)
    case mfaChallengeIssued(MFAChallengeIssued)
    case mfaChallengeFailed(MFAChallengeFailed)
    case mfaChallengeEnded(MFAChallengeEnded)
    case newDeviceAlerted(NewDeviceAlerted)
    case mfaDailyLimitReached(MFADailyLimitReached)
    case passkeyRegistered(PasskeyRegistered)
    case passkeyRenamed(PasskeyRenamed)
    case passkeyUsed(PasskeyUsed)
    case passkeyRemoved(PasskeyRemoved)
    case passkeySuspect(PasskeySuspect)
    case holdPlaced(Hold)
    case holdReleased(HoldReleased)
    case holdLapsed(HoldLapsed)
    case deletionScheduled(DeletionScheduled)
    case purged(Purged)

    public struct Registered: Codable, Sendable, Equatable {
        public var email: String?
        public var displayName: String?
        public var method: String
        enum CodingKeys: String, CodingKey { case email, displayName = "display_name", method }

        public init(email: String?, displayName: String?, method: String) {
            self.email = email
            self.displayName = displayName
            self.method = method
        }
    }

    public struct PasswordSet: Codable, Sendable, Equatable {
        /// The self-describing scrypt string; never the password.
        public var passwordHash: String
        public var reason: PasswordSetReason
        /// The signed-in session that set it.
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey { case passwordHash = "password_hash", reason, sessionID = "session_id" }

        public init(passwordHash: String, reason: PasswordSetReason, sessionID: UUID? = nil) {
            self.passwordHash = passwordHash
            self.reason = reason
            self.sessionID = sessionID
        }
    }

    public struct EmailLinkSent: Codable, Sendable, Equatable {
        public var email: String
        public var linkID: UUID
        public var expiresAt: Date
        /// SHA-256 (hex) of the link's token, so the link index can be rebuilt from events.
        public var tokenHash: String?
        /// For re-auth links: the session the grant will belong to.
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey {
            case email, linkID = "link_id", expiresAt = "expires_at", tokenHash = "token_sha256", sessionID = "session_id"
        }

        public init(email: String, linkID: UUID, expiresAt: Date, tokenHash: String? = nil, sessionID: UUID? = nil) {
            self.email = email
            self.linkID = linkID
            self.expiresAt = expiresAt
            self.tokenHash = tokenHash
            self.sessionID = sessionID
        }
    }

    public struct EmailVerified: Codable, Sendable, Equatable {
        public var email: String
        /// How the address was proven when not by its verification link: `reauth_link` (a
        /// re-auth link sent to it was used).
        public var via: String?

        public init(email: String, via: String? = nil) {
            self.email = email
            self.via = via
        }
    }

    public struct SessionStarted: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var method: String
        public var device: String?
        /// SHA-256 (hex) of the tokens; the tokens themselves exist only in the client.
        public var accessTokenHash: String
        public var refreshTokenHash: String
        public var accessExpiresAt: Date
        public var refreshExpiresAt: Date
        /// The device it came from: the id its `device_token` names.
        public var deviceID: UUID?
        /// The language of the sign-in; the account's messages follow the last one.
        public var locale: String?
        enum CodingKeys: String, CodingKey {
            case sessionID = "session_id", method, device
            case accessTokenHash = "access_token_sha256", refreshTokenHash = "refresh_token_sha256"
            case accessExpiresAt = "access_expires_at", refreshExpiresAt = "refresh_expires_at", deviceID = "device_id", locale
        }

        public init(
            sessionID: UUID, method: String, device: String?, accessTokenHash: String, refreshTokenHash: String, accessExpiresAt: Date,
            refreshExpiresAt: Date, deviceID: UUID? = nil, locale: String? = nil
        ) {
            self.locale = locale
            self.deviceID = deviceID
            self.sessionID = sessionID
            self.method = method
            self.device = device
            self.accessTokenHash = accessTokenHash
            self.refreshTokenHash = refreshTokenHash
            self.accessExpiresAt = accessExpiresAt
            self.refreshExpiresAt = refreshExpiresAt
        }
    }

    public struct SessionRefreshed: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var accessTokenHash: String
        public var refreshTokenHash: String
        public var accessExpiresAt: Date
        public var refreshExpiresAt: Date
        enum CodingKeys: String, CodingKey {
            case sessionID = "session_id"
            case accessTokenHash = "access_token_sha256", refreshTokenHash = "refresh_token_sha256"
            case accessExpiresAt = "access_expires_at", refreshExpiresAt = "refresh_expires_at"
        }

        public init(sessionID: UUID, accessTokenHash: String, refreshTokenHash: String, accessExpiresAt: Date, refreshExpiresAt: Date) {
            self.sessionID = sessionID
            self.accessTokenHash = accessTokenHash
            self.refreshTokenHash = refreshTokenHash
            self.accessExpiresAt = accessExpiresAt
            self.refreshExpiresAt = refreshExpiresAt
        }
    }

    public struct SessionRevoked: Codable, Sendable, Equatable {
        public var sessionID: UUID
        /// `logout`, `revoked_by_user`, `refresh_token_reused`, `password_changed`, `password_reset`.
        public var reason: String
        enum CodingKeys: String, CodingKey { case sessionID = "session_id", reason }

        public init(sessionID: UUID, reason: String) {
            self.sessionID = sessionID
            self.reason = reason
        }
    }

    public struct LoginFailed: Codable, Sendable, Equatable {
        public var failures: Int

        public init(failures: Int) {
            self.failures = failures
        }
    }

    public struct LoginThrottled: Codable, Sendable, Equatable {
        public var until: Date

        public init(until: Date) {
            self.until = until
        }
    }

    public struct HandleClaimed: Codable, Sendable, Equatable {
        public var handle: String
        public var temporary: Bool

        public init(handle: String, temporary: Bool) {
            self.handle = handle
            self.temporary = temporary
        }
    }

    /// A deletion was asked for but holds block it: the purge worker schedules it once they
    /// have lapsed or been released.
    public struct DeletionRequested: Codable, Sendable, Equatable {
        /// Who asked: `apple` (its account-delete notification).
        public var by: String
        /// The kinds of hold that blocked it then.
        public var blockedBy: [HoldKind]
        enum CodingKeys: String, CodingKey { case by, blockedBy = "blocked_by" }

        public init(by: String, blockedBy: [HoldKind]) {
            self.by = by
            self.blockedBy = blockedBy
        }
    }

    /// The account is deleted: signed out everywhere, purged after `purge_after`, and its
    /// identifiers (as keyed hashes) may not register again before `cooldown_until`.
    public struct DeletionScheduled: Codable, Sendable, Equatable {
        public var purgeAfter: Date
        public var cooldownUntil: Date
        /// HMAC-SHA256 (hex) of `email:…`, `phone:…`, `apple:…`, `google:…`.
        public var cooldownKeys: [String]
        enum CodingKeys: String, CodingKey {
            case purgeAfter = "purge_after", cooldownUntil = "cooldown_until", cooldownKeys = "cooldown_keys"
        }

        public init(purgeAfter: Date, cooldownUntil: Date, cooldownKeys: [String]) {
            self.purgeAfter = purgeAfter
            self.cooldownUntil = cooldownUntil
            self.cooldownKeys = cooldownKeys
        }
    }

    /// The account's data key was destroyed and its personal data removed from every
    /// projection. Written unencrypted and without personal data, so it stays readable.
    public struct Purged: Codable, Sendable, Equatable {
        /// The deletion this purge completes.
        public var deletedAt: Date?
        enum CodingKeys: String, CodingKey { case deletedAt = "deleted_at" }

        public init(deletedAt: Date?) {
            self.deletedAt = deletedAt
        }
    }

    public struct HoldReleased: Codable, Sendable, Equatable {
        public var ref: String
        /// The API key that released it (the one that placed it, or an administrator's).
        public var keyID: String?
        enum CodingKeys: String, CodingKey { case ref, keyID = "key_id" }

        public init(ref: String, keyID: String? = nil) {
            self.ref = ref
            self.keyID = keyID
        }
    }

    /// A session or booking hold ended on its own when it started (appended by the service,
    /// so consumers see the hold go as they saw it come).
    public struct HoldLapsed: Codable, Sendable, Equatable {
        public var ref: String
        public var startsAt: Date?
        enum CodingKeys: String, CodingKey { case ref, startsAt = "starts_at" }

        public init(ref: String, startsAt: Date?) {
            self.ref = ref
            self.startsAt = startsAt
        }
    }

    public struct ProfileUpdated: Codable, Sendable, Equatable {
        public var displayName: String?
        enum CodingKeys: String, CodingKey { case displayName = "display_name" }

        public init(displayName: String?) {
            self.displayName = displayName
        }
    }
}

extension AccountEvent {
    /// The stored type name.
    public var type: String { kind.rawValue }

    /// The payload schema version written today.
    public var schemaVersion: Int { 1 }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.format(date))
        }
        return encoder
    }()

    /// Reads payloads (folds decode thousands; Foundation's `JSONDecoder` was most of their time).
    static let decoder = JSONPayloadDecoder(parseDate: RFC3339.parse)

    /// The JSON payload.
    public func encodedPayload() throws -> [UInt8] {
        Array(try Self.encoder.encode(payload))
    }

    private var payload: any Encodable {
        switch self {
        case .registered(let value): return value
        case .passwordSet(let value): return value
        case .emailVerificationSent(let value), .passwordResetRequested(let value), .reauthLinkSent(let value),
            .emailChangeRequested(let value):
            return value
        case .emailAdded(let value): return value
        case .emailAddRequested(let value): return value
        case .emailChanged(let value): return value
        case .emailReverted(let value): return value
        case .providerLinked(let value): return value
        case .providerUnlinked(let value): return value
        case .phoneRemoved(let value): return value
        case .accountDisabled(let value): return value
        case .accountEnabled(let value): return value
        case .appleNotificationReceived(let value): return value
        case .deletionRequested(let value): return value
        case .emailRemoved(let value): return value
        case .providerTokensStored(let value): return value
        case .providerTokenRevoked(let value): return value
        case .totpEnrolmentStarted(let value): return value
        case .totpEnabled(let value): return value
        case .totpDisabled(let value): return value
        case .recoveryCodesRegenerated(let value): return value
        case .totpCodeUsed(let value): return value
        case .recoveryCodeUsed(let value): return value
        case .mfaChallengeIssued(let value): return value
        case .mfaChallengeFailed(let value): return value
        case .mfaChallengeEnded(let value): return value
        case .newDeviceAlerted(let value): return value
        case .mfaDailyLimitReached(let value): return value
        case .passkeyRegistered(let value): return value
        case .passkeyRenamed(let value): return value
        case .passkeyUsed(let value): return value
        case .passkeyRemoved(let value): return value
        case .passkeySuspect(let value): return value
        case .holdPlaced(let value): return value
        case .holdReleased(let value): return value
        case .holdLapsed(let value): return value
        case .deletionScheduled(let value): return value
        case .purged(let value): return value
        case .emailVerified(let value): return value
        case .sessionStarted(let value): return value
        case .sessionRefreshed(let value): return value
        case .sessionRevoked(let value): return value
        case .loginFailed(let value): return value
        case .loginThrottled(let value): return value
        case .handleClaimed(let value): return value
        case .profileUpdated(let value): return value
        case .phoneLinked(let value): return value
        case .phoneChanged(let value): return value
        case .reauthGranted(let value): return value
        case .reauthFailed(let value): return value
        case .reauthNonceIssued(let value): return value
        case .reauthGrantsRevoked(let value): return value
        case .emailLinksRevoked(let value): return value
        }
    }

    /// Reads a stored event, upcasting older schema versions. Unknown types (written by a newer
    /// version, or by other features) are nil, and `evolve` skips them.
    public static func decode(type: String, schemaVersion: Int, payload: [UInt8]) throws -> AccountEvent? {
        guard let kind = Kind(rawValue: type) else { return nil }
        switch kind {
        case .registered: return .registered(try decoder.decode(Registered.self, from: payload))
        case .passwordSet: return .passwordSet(try decoder.decode(PasswordSet.self, from: payload))
        case .emailVerificationSent: return .emailVerificationSent(try decoder.decode(EmailLinkSent.self, from: payload))
        case .emailVerified: return .emailVerified(try decoder.decode(EmailVerified.self, from: payload))
        case .passwordResetRequested: return .passwordResetRequested(try decoder.decode(EmailLinkSent.self, from: payload))
        case .sessionStarted: return .sessionStarted(try decoder.decode(SessionStarted.self, from: payload))
        case .sessionRefreshed: return .sessionRefreshed(try decoder.decode(SessionRefreshed.self, from: payload))
        case .sessionRevoked: return .sessionRevoked(try decoder.decode(SessionRevoked.self, from: payload))
        case .loginFailed: return .loginFailed(try decoder.decode(LoginFailed.self, from: payload))
        case .loginThrottled: return .loginThrottled(try decoder.decode(LoginThrottled.self, from: payload))
        case .handleClaimed: return .handleClaimed(try decoder.decode(HandleClaimed.self, from: payload))
        case .profileUpdated: return .profileUpdated(try decoder.decode(ProfileUpdated.self, from: payload))
        case .phoneLinked: return .phoneLinked(try decoder.decode(PhoneLinked.self, from: payload))
        case .phoneChanged: return .phoneChanged(try decoder.decode(PhoneChanged.self, from: payload))
        case .reauthGranted: return .reauthGranted(try decoder.decode(ReauthGranted.self, from: payload))
        case .reauthFailed: return .reauthFailed(try decoder.decode(ReauthFailed.self, from: payload))
        case .reauthLinkSent: return .reauthLinkSent(try decoder.decode(EmailLinkSent.self, from: payload))
        case .reauthNonceIssued: return .reauthNonceIssued(try decoder.decode(ReauthNonceIssued.self, from: payload))
        case .reauthGrantsRevoked: return .reauthGrantsRevoked(try decoder.decode(ReauthGrantsRevoked.self, from: payload))
        case .emailLinksRevoked: return .emailLinksRevoked(try decoder.decode(EmailLinksRevoked.self, from: payload))
        case .emailAdded: return .emailAdded(try decoder.decode(EmailAdded.self, from: payload))
        case .emailAddRequested: return .emailAddRequested(try decoder.decode(EmailAddRequested.self, from: payload))
        case .emailChangeRequested: return .emailChangeRequested(try decoder.decode(EmailLinkSent.self, from: payload))
        case .emailChanged: return .emailChanged(try decoder.decode(EmailChanged.self, from: payload))
        case .emailReverted: return .emailReverted(try decoder.decode(EmailReverted.self, from: payload))
        case .providerLinked: return .providerLinked(try decoder.decode(ProviderLinked.self, from: payload))
        case .providerUnlinked: return .providerUnlinked(try decoder.decode(ProviderUnlinked.self, from: payload))
        case .phoneRemoved: return .phoneRemoved(try decoder.decode(PhoneRemoved.self, from: payload))
        case .accountDisabled: return .accountDisabled(try decoder.decode(AccountDisabled.self, from: payload))
        case .accountEnabled: return .accountEnabled(try decoder.decode(AccountEnabled.self, from: payload))
        case .appleNotificationReceived:
            return .appleNotificationReceived(try decoder.decode(AppleNotificationReceived.self, from: payload))
        case .deletionRequested: return .deletionRequested(try decoder.decode(DeletionRequested.self, from: payload))
        case .emailRemoved: return .emailRemoved(try decoder.decode(EmailRemoved.self, from: payload))
        case .providerTokensStored: return .providerTokensStored(try decoder.decode(ProviderTokensStored.self, from: payload))
        case .providerTokenRevoked: return .providerTokenRevoked(try decoder.decode(ProviderTokenRevoked.self, from: payload))
        case .totpEnrolmentStarted: return .totpEnrolmentStarted(try decoder.decode(TOTPEnrolmentStarted.self, from: payload))
        case .totpEnabled: return .totpEnabled(try decoder.decode(TOTPEnabled.self, from: payload))
        case .totpDisabled: return .totpDisabled(try decoder.decode(TOTPDisabled.self, from: payload))
        case .recoveryCodesRegenerated: return .recoveryCodesRegenerated(try decoder.decode(RecoveryCodesRegenerated.self, from: payload))
        case .totpCodeUsed: return .totpCodeUsed(try decoder.decode(TOTPCodeUsed.self, from: payload))
        case .recoveryCodeUsed: return .recoveryCodeUsed(try decoder.decode(RecoveryCodeUsed.self, from: payload))
        case .mfaChallengeIssued: return .mfaChallengeIssued(try decoder.decode(MFAChallengeIssued.self, from: payload))
        case .mfaChallengeFailed: return .mfaChallengeFailed(try decoder.decode(MFAChallengeFailed.self, from: payload))
        case .mfaChallengeEnded: return .mfaChallengeEnded(try decoder.decode(MFAChallengeEnded.self, from: payload))
        case .newDeviceAlerted: return .newDeviceAlerted(try decoder.decode(NewDeviceAlerted.self, from: payload))
        case .mfaDailyLimitReached: return .mfaDailyLimitReached(try decoder.decode(MFADailyLimitReached.self, from: payload))
        case .passkeyRegistered: return .passkeyRegistered(try decoder.decode(PasskeyRegistered.self, from: payload))
        case .passkeyRenamed: return .passkeyRenamed(try decoder.decode(PasskeyRenamed.self, from: payload))
        case .passkeyUsed: return .passkeyUsed(try decoder.decode(PasskeyUsed.self, from: payload))
        case .passkeyRemoved: return .passkeyRemoved(try decoder.decode(PasskeyRemoved.self, from: payload))
        case .passkeySuspect: return .passkeySuspect(try decoder.decode(PasskeySuspect.self, from: payload))
        case .holdPlaced: return .holdPlaced(try decoder.decode(Hold.self, from: payload))
        case .holdReleased: return .holdReleased(try decoder.decode(HoldReleased.self, from: payload))
        case .holdLapsed: return .holdLapsed(try decoder.decode(HoldLapsed.self, from: payload))
        case .deletionScheduled: return .deletionScheduled(try decoder.decode(DeletionScheduled.self, from: payload))
        case .purged: return .purged(try decoder.decode(Purged.self, from: payload))
        }
    }

}
