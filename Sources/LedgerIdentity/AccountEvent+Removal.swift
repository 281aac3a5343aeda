import Foundation

extension AccountEvent {
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

    /// The email was removed, and the password with it (it signed in with that email). A
    /// verified address gets a revert link, recorded here by its hash, and is held from other
    /// accounts while it lives, as after an email change.
    public struct EmailRemoved: Codable, Sendable, Equatable {
        public var email: String
        public var passwordRemoved: Bool
        /// The session that removed it.
        public var sessionID: UUID?
        public var revertLinkID: UUID?
        public var revertExpiresAt: Date?
        public var revertTokenHash: String?
        /// The address's keyed hash, held from other accounts while the revert link lives.
        public var emailKey: String?
        /// Why, when not the person's removal: `proven_by_another_account` (an address never
        /// verified here, proven by another account's confirmation link).
        public var reason: MethodRemovalReason?
        enum CodingKeys: String, CodingKey {
            case email, passwordRemoved = "password_removed", sessionID = "session_id", revertLinkID = "revert_link_id"
            case revertExpiresAt = "revert_expires_at", revertTokenHash = "revert_token_sha256", emailKey = "email_key", reason
        }

        public init(
            email: String, passwordRemoved: Bool, sessionID: UUID? = nil, revertLinkID: UUID? = nil, revertExpiresAt: Date? = nil,
            revertTokenHash: String? = nil, emailKey: String? = nil, reason: MethodRemovalReason? = nil
        ) {
            self.reason = reason
            self.email = email
            self.passwordRemoved = passwordRemoved
            self.sessionID = sessionID
            self.revertLinkID = revertLinkID
            self.revertExpiresAt = revertExpiresAt
            self.revertTokenHash = revertTokenHash
            self.emailKey = emailKey
        }
    }
}
