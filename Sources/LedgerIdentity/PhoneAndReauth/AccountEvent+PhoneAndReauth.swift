import Foundation

extension AccountEvent {
    /// A phone number became a sign-in method of the account (sign-up by phone, add phone).
    public struct PhoneLinked: Codable, Sendable, Equatable {
        /// E.164.
        public var phone: String
        /// ISO code of the region the user picked.
        public var region: String
        /// The OTP request that proved the number.
        public var requestID: UUID?
        /// The signed-in session that added it (nil: a sign-up by phone).
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey { case phone, region, requestID = "request_id", sessionID = "session_id" }

        public init(phone: String, region: String, requestID: UUID?, sessionID: UUID? = nil) {
            self.phone = phone
            self.region = region
            self.requestID = requestID
            self.sessionID = sessionID
        }
    }

    /// The account's phone number moved to a new one; the old one is free again.
    public struct PhoneChanged: Codable, Sendable, Equatable {
        public var phone: String
        public var region: String
        public var previousPhone: String?
        public var requestID: UUID?
        /// The session that changed it.
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey {
            case phone, region, previousPhone = "previous_phone", requestID = "request_id", sessionID = "session_id"
        }

        public init(phone: String, region: String, previousPhone: String?, requestID: UUID?, sessionID: UUID? = nil) {
            self.phone = phone
            self.region = region
            self.previousPhone = previousPhone
            self.requestID = requestID
            self.sessionID = sessionID
        }
    }

    /// "Verify it's you" succeeded: a grant for one session until `expires_at`.
    public struct ReauthGranted: Codable, Sendable, Equatable {
        public var grantID: UUID
        public var sessionID: UUID
        /// `password`, `phone`, `email_link`, `apple`, `google`.
        public var method: String
        /// SHA-256 (hex) of the re-auth token; the token itself exists only in the client.
        public var tokenHash: String
        public var expiresAt: Date
        /// The re-auth link this grant used up, if any.
        public var linkID: UUID?
        /// The re-auth nonce an Apple or Google ID token carried, used up by this grant.
        public var nonceID: UUID?
        /// The passkey whose assertion earned a `passkey` grant: it never vouches for its own removal.
        public var passkeyID: UUID?
        enum CodingKeys: String, CodingKey {
            case grantID = "grant_id", sessionID = "session_id", method, tokenHash = "token_sha256"
            case expiresAt = "expires_at", linkID = "link_id", nonceID = "nonce_id", passkeyID = "passkey_id"
        }

        public init(
            grantID: UUID, sessionID: UUID, method: String, tokenHash: String, expiresAt: Date, linkID: UUID? = nil, nonceID: UUID? = nil,
            passkeyID: UUID? = nil
        ) {
            self.grantID = grantID
            self.sessionID = sessionID
            self.method = method
            self.tokenHash = tokenHash
            self.expiresAt = expiresAt
            self.linkID = linkID
            self.nonceID = nonceID
            self.passkeyID = passkeyID
        }
    }

    /// A one-use nonce for re-auth by Apple or Google was handed to `session_id`: the ID token
    /// must carry it (or its SHA-256), which binds the token to this session and this moment.
    public struct ReauthNonceIssued: Codable, Sendable, Equatable {
        public var nonceID: UUID
        public var sessionID: UUID
        /// SHA-256 (hex) of the nonce; the nonce itself exists only in the client.
        public var nonceHash: String
        public var expiresAt: Date
        enum CodingKeys: String, CodingKey {
            case nonceID = "nonce_id", sessionID = "session_id", nonceHash = "nonce_sha256", expiresAt = "expires_at"
        }

        public init(nonceID: UUID, sessionID: UUID, nonceHash: String, expiresAt: Date) {
            self.nonceID = nonceID
            self.sessionID = sessionID
            self.nonceHash = nonceHash
            self.expiresAt = expiresAt
        }
    }

    /// Re-auth grants ended before their time: recovery (a password reset or change, an email
    /// revert) or deletion won over whoever earned them.
    public struct ReauthGrantsRevoked: Codable, Sendable, Equatable {
        public var grantIDs: [UUID]
        /// `password_reset`, `password_changed`, `email_reverted`, `account_deleted`.
        public var reason: String
        enum CodingKeys: String, CodingKey { case grantIDs = "grant_ids", reason }

        public init(grantIDs: [UUID], reason: String) {
            self.grantIDs = grantIDs
            self.reason = reason
        }
    }

    /// A re-auth attempt failed (a wrong password).
    public struct ReauthFailed: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var method: String
        enum CodingKeys: String, CodingKey { case sessionID = "session_id", method }

        public init(sessionID: UUID, method: String) {
            self.sessionID = sessionID
            self.method = method
        }
    }

    /// The sign-in phone number was removed.
    public struct PhoneRemoved: Codable, Sendable, Equatable {
        public var phone: String
        /// Why, when not the person's removal: `email_reverted`, `address_proven` (as for `ProviderUnlinked`).
        public var reason: MethodRemovalReason?

        public init(phone: String, reason: MethodRemovalReason? = nil) {
            self.phone = phone
            self.reason = reason
        }
    }
}

extension AccountEvent {
    /// The phone and re-auth area's events in the catalogue (`AccountEvent.registry`): each with its
    /// payload type and the commands whose decision appends it.
    static let phoneAndReauthRegistrations: [Registration] = [
        .init(.phoneLinked, PhoneLinked.self, AccountEvent.phoneLinked, emittedBy: ["registerByPhone", "linkPhone", "importAccount"]),
        .init(.phoneChanged, PhoneChanged.self, AccountEvent.phoneChanged, emittedBy: ["changePhone"]),
        .init(
            .phoneRemoved, PhoneRemoved.self, AccountEvent.phoneRemoved,
            emittedBy: ["removePhone", "revertEmail", "resetPassword", "support"]),
        .init(
            .reauthGranted, ReauthGranted.self, AccountEvent.reauthGranted,
            emittedBy: ["grantReauth", "confirmReauthLink", "grantReauthByTOTP", "grantReauthByPasskey"]),
        .init(.reauthNonceIssued, ReauthNonceIssued.self, AccountEvent.reauthNonceIssued, emittedBy: ["issueReauthNonce"]),
        .init(
            .reauthGrantsRevoked, ReauthGrantsRevoked.self, AccountEvent.reauthGrantsRevoked,
            emittedBy: [
                "resetPassword", "changePassword", "revertEmail", "disableAccount", "handleAppleNotification", "completeRequestedDeletion",
                "deleteAccount", "support",
            ]),
        .init(.reauthLinkSent, EmailLinkSent.self, AccountEvent.reauthLinkSent, emittedBy: ["sendReauthLink"]),
        .init(.reauthFailed, ReauthFailed.self, AccountEvent.reauthFailed, emittedBy: ["recordReauthFailure"]),
    ]
}
