import Foundation

/// The events of one staff member's stream (`staff.*`, docs/support.md "The console"): the
/// invitation, the passkey it registered, the console sessions, the removal. Tokens appear
/// only as SHA-256; the payloads are sealed under the staff member's own data key.
public enum StaffEvent: Sendable, Equatable {
    case invited(Invited)
    case passkeyRegistered(PasskeyRegistered)
    case signedIn(SignedIn)
    case passkeyConfirmed(PasskeyConfirmed)
    case signedOut(SignedOut)
    case removed(Removed)

    /// An invitation (`ledger staff add`): its link's token by hash, good for 24 hours. A new
    /// invitation replaces the one before.
    public struct Invited: Codable, Sendable, Equatable {
        public var email: String
        public var role: StaffRole
        public var invitationTokenHash: String
        public var expiresAt: Date
        enum CodingKeys: String, CodingKey {
            case email, role, invitationTokenHash = "invitation_sha256", expiresAt = "expires_at"
        }

        public init(email: String, role: StaffRole, invitationTokenHash: String, expiresAt: Date) {
            self.email = email
            self.role = role
            self.invitationTokenHash = invitationTokenHash
            self.expiresAt = expiresAt
        }
    }

    /// The passkey the invitation registered: staff sign in with it, and only with it.
    public struct PasskeyRegistered: Codable, Sendable, Equatable {
        public var passkeyID: UUID
        /// base64url, as the authenticator gave them.
        public var credentialID: String
        public var publicKey: String
        public var algorithm: Int
        public var signCount: Int64
        public var userHandle: String
        enum CodingKeys: String, CodingKey {
            case passkeyID = "passkey_id", credentialID = "credential_id", publicKey = "public_key", algorithm
            case signCount = "sign_count", userHandle = "user_handle"
        }

        public init(passkeyID: UUID, credentialID: String, publicKey: String, algorithm: Int, signCount: Int64, userHandle: String) {
            self.passkeyID = passkeyID
            self.credentialID = credentialID
            self.publicKey = publicKey
            self.algorithm = algorithm
            self.signCount = signCount
            self.userHandle = userHandle
        }
    }

    /// A console session: its cookie's token by hash, for 8 hours.
    public struct SignedIn: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var tokenHash: String
        public var expiresAt: Date
        public var passkeyID: UUID
        public var signCount: Int64
        enum CodingKeys: String, CodingKey {
            case sessionID = "session_id", tokenHash = "token_sha256", expiresAt = "expires_at", passkeyID = "passkey_id"
            case signCount = "sign_count"
        }

        public init(sessionID: UUID, tokenHash: String, expiresAt: Date, passkeyID: UUID, signCount: Int64) {
            self.sessionID = sessionID
            self.tokenHash = tokenHash
            self.expiresAt = expiresAt
            self.passkeyID = passkeyID
            self.signCount = signCount
        }
    }

    /// The passkey shown again for an `admin`-role action, in a live session.
    public struct PasskeyConfirmed: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var passkeyID: UUID
        public var signCount: Int64
        enum CodingKeys: String, CodingKey { case sessionID = "session_id", passkeyID = "passkey_id", signCount = "sign_count" }

        public init(sessionID: UUID, passkeyID: UUID, signCount: Int64) {
            self.sessionID = sessionID
            self.passkeyID = passkeyID
            self.signCount = signCount
        }
    }

    /// A console session ended: `signed_out`, or `staff_removed`.
    public struct SignedOut: Codable, Sendable, Equatable {
        public var sessionID: UUID
        public var reason: String
        enum CodingKeys: String, CodingKey { case sessionID = "session_id", reason }

        public init(sessionID: UUID, reason: String) {
            self.sessionID = sessionID
            self.reason = reason
        }
    }

    /// The staff member was removed (`ledger staff remove`): every session ended with it.
    public struct Removed: Codable, Sendable, Equatable {
        public init() {}
    }
}

/// What a staff member may do in the console: `support` the calls of `accounts:support`,
/// `admin` those of `accounts:admin` too, each confirmed by the passkey again.
public enum StaffRole: String, Codable, Sendable, CaseIterable {
    case support, admin
}
