import Foundation

extension AccountEvent {
    /// An account without an email (phone or provider sign-up) added one: with a password, to
    /// be verified by its link; or verified already (`verified_by`): the provider that vouched
    /// for it when it was linked (`apple`, `google`), or `link` when its confirmation link was used.
    public struct EmailAdded: Codable, Sendable, Equatable {
        public var email: String
        public var verifiedBy: String?
        enum CodingKeys: String, CodingKey { case email, verifiedBy = "verified_by" }

        public init(email: String, verifiedBy: String? = nil) {
            self.email = email
            self.verifiedBy = verifiedBy
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
        enum CodingKeys: String, CodingKey {
            case email, previousEmail = "previous_email", previousEmailVerified = "previous_email_verified", linkID = "link_id"
            case revertLinkID = "revert_link_id", revertExpiresAt = "revert_expires_at", revertTokenHash = "revert_token_sha256"
            case previousEmailKey = "previous_email_key"
        }

        public init(
            email: String, previousEmail: String?, previousEmailVerified: Bool, linkID: UUID, revertLinkID: UUID,
            revertExpiresAt: Date, revertTokenHash: String?, previousEmailKey: String? = nil
        ) {
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

    /// The old address's owner used the revert link: the address is back (and verified, by
    /// that link); every session is revoked in the same append.
    public struct EmailReverted: Codable, Sendable, Equatable {
        public var email: String
        public var linkID: UUID
        enum CodingKeys: String, CodingKey { case email, linkID = "link_id" }

        public init(email: String, linkID: UUID) {
            self.email = email
            self.linkID = linkID
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
