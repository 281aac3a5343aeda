import Foundation

extension AccountEvent {
    /// An account without an email (phone or provider sign-up) added one: with a password, to
    /// be verified by its link; or verified already (`verified_by`): the provider that vouched
    /// for it when it was linked (`apple`, `google`), or `link` when its confirmation link was used.
    public struct EmailAdded: Codable, Sendable, Equatable {
        public var email: String
        public var verifiedBy: String?
        /// The signed-in session that added it.
        public var sessionID: UUID?
        /// The confirmation link it used (`verified_by: link`).
        public var linkID: UUID?
        enum CodingKeys: String, CodingKey { case email, verifiedBy = "verified_by", sessionID = "session_id", linkID = "link_id" }

        public init(email: String, verifiedBy: String? = nil, sessionID: UUID? = nil, linkID: UUID? = nil) {
            self.email = email
            self.verifiedBy = verifiedBy
            self.sessionID = sessionID
            self.linkID = linkID
        }
    }

    /// `add-with-password` asked to make a new address the account's email: a confirmation link
    /// went to it, and nothing is claimed until the link is used. The password waits here, as
    /// its hash, sealed like every payload.
    public struct EmailAddRequested: Codable, Sendable, Equatable {
        public var email: String
        public var linkID: UUID
        public var expiresAt: Date
        public var tokenHash: String?
        public var sessionID: UUID
        public var passwordHash: String
        enum CodingKeys: String, CodingKey {
            case email, linkID = "link_id", expiresAt = "expires_at", tokenHash = "token_sha256", sessionID = "session_id"
            case passwordHash = "password_hash"
        }

        public init(email: String, linkID: UUID, expiresAt: Date, tokenHash: String?, sessionID: UUID, passwordHash: String) {
            self.email = email
            self.linkID = linkID
            self.expiresAt = expiresAt
            self.tokenHash = tokenHash
            self.sessionID = sessionID
            self.passwordHash = passwordHash
        }
    }

    /// The confirmation link to the new address was used: the account's email is the new one,
    /// verified by that link. The old address gets a revert link, recorded here by its hash.
    public struct EmailChanged: Codable, Sendable, Equatable {
        public var email: String
        public var previousEmail: String?
        public var previousEmailVerified: Bool
        /// The confirmation link this change used up.
        public var linkID: UUID
        public var revertLinkID: UUID
        public var revertExpiresAt: Date
        public var revertTokenHash: String?
        /// The previous address's keyed hash: no other account may claim it while the revert link
        /// lives, so whoever moved the email cannot take the old address and block the way back.
        public var previousEmailKey: String?
        /// The session that asked for the change.
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey {
            case email, previousEmail = "previous_email", previousEmailVerified = "previous_email_verified", linkID = "link_id"
            case revertLinkID = "revert_link_id", revertExpiresAt = "revert_expires_at", revertTokenHash = "revert_token_sha256"
            case previousEmailKey = "previous_email_key", sessionID = "session_id"
        }

        public init(
            email: String, previousEmail: String?, previousEmailVerified: Bool, linkID: UUID, revertLinkID: UUID,
            revertExpiresAt: Date, revertTokenHash: String?, previousEmailKey: String? = nil, sessionID: UUID? = nil
        ) {
            self.sessionID = sessionID
            self.previousEmailKey = previousEmailKey
            self.email = email
            self.previousEmail = previousEmail
            self.previousEmailVerified = previousEmailVerified
            self.linkID = linkID
            self.revertLinkID = revertLinkID
            self.revertExpiresAt = revertExpiresAt
            self.revertTokenHash = revertTokenHash
        }
    }

    /// The old address's owner used the revert link of an email change or removal: the address
    /// is back (and verified, by that link). The same append revokes every session, grant and
    /// link, removes the methods added in the span the revert undoes (`removed_methods`, each
    /// with its own event), turns off a TOTP enrolled in it, and sets the new password.
    public struct EmailReverted: Codable, Sendable, Equatable {
        public var email: String
        public var linkID: UUID
        /// `phone`, `apple`, `google`.
        public var removedMethods: [String]
        public var twoFactorReset: Bool
        /// The other revert links this one ends: those of changes after the one it undoes (nil in
        /// events written before they were named: then those expiring no earlier).
        public var endedRevertLinkIDs: [UUID]?
        enum CodingKeys: String, CodingKey {
            case email, linkID = "link_id", removedMethods = "removed_methods", twoFactorReset = "two_factor_reset"
            case endedRevertLinkIDs = "ended_revert_link_ids"
        }

        public init(
            email: String, linkID: UUID, removedMethods: [String] = [], twoFactorReset: Bool = false, endedRevertLinkIDs: [UUID]? = nil
        ) {
            self.email = email
            self.linkID = linkID
            self.removedMethods = removedMethods
            self.twoFactorReset = twoFactorReset
            self.endedRevertLinkIDs = endedRevertLinkIDs
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            email = try container.decode(String.self, forKey: .email)
            linkID = try container.decode(UUID.self, forKey: .linkID)
            removedMethods = try container.decodeIfPresent([String].self, forKey: .removedMethods) ?? []
            twoFactorReset = try container.decodeIfPresent(Bool.self, forKey: .twoFactorReset) ?? false
            endedRevertLinkIDs = try container.decodeIfPresent([UUID].self, forKey: .endedRevertLinkIDs)
        }
    }

    /// Pending email links (verification, change, reset, re-auth; revert links at deletion
    /// only) ended unused: recovery or deletion won over whoever holds them.
    public struct EmailLinksRevoked: Codable, Sendable, Equatable {
        public var linkIDs: [UUID]
        /// As for `ReauthGrantsRevoked`; also `superseded` (a newer email-change request ended
        /// the earlier change links).
        public var reason: String
        enum CodingKeys: String, CodingKey { case linkIDs = "link_ids", reason }

        public init(linkIDs: [UUID], reason: String) {
            self.linkIDs = linkIDs
            self.reason = reason
        }
    }
}

extension AccountEvent {
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

    /// An imported account's first password sign-in replaced the other system's hash with the
    /// service's scrypt of the same password.
    public struct PasswordRehashed: Codable, Sendable, Equatable {
        /// The service's scrypt string; never the password.
        public var passwordHash: String
        /// The form it replaced (`bcrypt`, `argon2id`, `firebase_scrypt`, …).
        public var replacedForm: String?
        enum CodingKeys: String, CodingKey { case passwordHash = "password_hash", replacedForm = "replaced_form" }

        public init(passwordHash: String, replacedForm: String?) {
            self.passwordHash = passwordHash
            self.replacedForm = replacedForm
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

extension AccountEvent {
    /// The email area's events in the catalogue (`AccountEvent.registry`): each with its
    /// payload type and the commands whose decision appends it.
    static let emailRegistrations: [Registration] = [
        .init(
            .passwordSet, PasswordSet.self, AccountEvent.passwordSet,
            emittedBy: [
                "register", "resetPassword", "rehashPassword", "changePassword", "addEmailAndPassword", "confirmEmailAdd", "revertEmail",
                "importAccount",
            ]),
        .init(.passwordRehashed, PasswordRehashed.self, AccountEvent.passwordRehashed, emittedBy: ["rehashPassword"]),
        .init(
            .emailVerificationSent, EmailLinkSent.self, AccountEvent.emailVerificationSent, emittedBy: ["register", "sendVerificationLink"]),
        .init(
            .passwordResetRequested, EmailLinkSent.self, AccountEvent.passwordResetRequested,
            emittedBy: ["sendPasswordResetLink", "support"]),
        .init(
            .emailVerified, EmailVerified.self, AccountEvent.emailVerified,
            emittedBy: ["confirmVerificationLink", "confirmReauthLink", "registerByProvider", "resetPassword", "importAccount"]),
        .init(
            .emailLinksRevoked, EmailLinksRevoked.self, AccountEvent.emailLinksRevoked,
            emittedBy: [
                "resetPassword", "changePassword", "revertEmail", "removeEmail", "disableAccount", "handleAppleNotification",
                "completeRequestedDeletion", "deleteAccount", "requestEmailChange", "releaseUnprovenEmail", "support",
            ]),
        .init(.emailAdded, EmailAdded.self, AccountEvent.emailAdded, emittedBy: ["confirmEmailAdd", "linkProvider"]),
        .init(.emailAddRequested, EmailAddRequested.self, AccountEvent.emailAddRequested, emittedBy: ["addEmailAndPassword"]),
        .init(.emailChangeRequested, EmailLinkSent.self, AccountEvent.emailChangeRequested, emittedBy: ["requestEmailChange"]),
        .init(.emailChanged, EmailChanged.self, AccountEvent.emailChanged, emittedBy: ["confirmEmailChange"]),
        .init(.emailRemoved, EmailRemoved.self, AccountEvent.emailRemoved, emittedBy: ["removeEmail", "releaseUnprovenEmail", "support"]),
        .init(.emailReverted, EmailReverted.self, AccountEvent.emailReverted, emittedBy: ["revertEmail"]),
    ]
}
