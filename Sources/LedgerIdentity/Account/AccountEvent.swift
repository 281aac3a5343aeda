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
    case imported(Imported)
    case passwordSet(PasswordSet)
    case passwordRehashed(PasswordRehashed)
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
        Array(try Self.encoder.encode(parts.payload))
    }

    /// The payload to store, and the event as reading that payload gives it back (times to the
    /// second): what the caller projects and answers now is what a rebuild from the stream gives.
    public func stored() throws -> (payload: [UInt8], event: AccountEvent) {
        let payload = try encodedPayload()
        return (payload, try Self.decode(type: type, schemaVersion: schemaVersion, payload: payload) ?? self)
    }

    /// Reads a stored event, upcasting older schema versions. Unknown types (written by a newer
    /// version, or by other features) are nil, and `evolve` skips them.
    public static func decode(type: String, schemaVersion: Int, payload: [UInt8]) throws -> AccountEvent? {
        // Every type is at schema version 1 so far: an upcast goes here when one changes.
        guard let registration = registry[type] else { return nil }
        return try registration.read(payload)
    }

}
