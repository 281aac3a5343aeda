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
    case localeChosen(LocaleChosen)
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
    /// A support call (`admin.*`): which one, who made it, and why.
    case admin(AdminRecord.Action, AdminRecord)
    case avatarSet(AvatarVersion)
    case avatarRemoved(AvatarVersion)

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

    /// Writes payloads: `encoder`'s bytes, several times faster (an import writes millions).
    static let payloadEncoder = JSONPayloadEncoder(formatDate: RFC3339.format)

    /// The JSON payload.
    public func encodedPayload() throws -> [UInt8] {
        try Self.encode(payload: parts.payload).bytes
    }

    /// `payload` as `encoder` writes it, through `payloadEncoder` (or `encoder` itself for a
    /// value the fast one leaves to it), and whether reading it back could give another value
    /// (it holds a `Date`, written to the second).
    static func encode(payload: some Encodable) throws -> (bytes: [UInt8], readsBackChanged: Bool) {
        let written: (bytes: [UInt8], holdsDates: Bool)
        do {
            written = try payloadEncoder.encodeNotingDates(payload)
        } catch is JSONPayloadEncoder.Unsupported {
            return (Array(try encoder.encode(payload)), true)
        }
        #if DEBUG
            // Every payload a debug build writes (the whole test suite's) is checked against Foundation's.
            let foundation = Array(try encoder.encode(payload))
            let differsAt =
                zip(written.bytes, foundation).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                ?? min(written.bytes.count, foundation.count)
            assert(
                written.bytes == foundation,
                "JSONPayloadEncoder differs from JSONEncoder for \(Swift.type(of: payload)) at byte \(differsAt)")
        #endif
        return (written.bytes, written.holdsDates)
    }

    /// The payload to store, and the event as reading that payload gives it back (times to the
    /// second): what the caller projects and answers now is what a rebuild from the stream gives.
    /// A payload without a time reads back as the event it was, and is not read.
    public func stored() throws -> (payload: [UInt8], event: AccountEvent) {
        let payload = try Self.encode(payload: parts.payload)
        guard payload.readsBackChanged else {
            #if DEBUG
                let readBack = try Self.decode(type: type, schemaVersion: schemaVersion, payload: payload.bytes)
                assert(readBack == nil || readBack == self, "\(type) reads back changed")
            #endif
            return (payload.bytes, self)
        }
        return (payload.bytes, try Self.decode(type: type, schemaVersion: schemaVersion, payload: payload.bytes) ?? self)
    }

    /// Reads a stored event, upcasting older schema versions. Unknown types (written by a newer
    /// version, or by other features) are nil, and `evolve` skips them.
    public static func decode(type: String, schemaVersion: Int, payload: [UInt8]) throws -> AccountEvent? {
        // Every type is at schema version 1 so far: an upcast goes here when one changes.
        guard let registration = registry[type] else { return nil }
        return try registration.read(payload)
    }

}
