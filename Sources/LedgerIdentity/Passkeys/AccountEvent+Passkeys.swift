import Foundation

extension AccountEvent {
    /// A passkey (a WebAuthn credential) became a sign-in method of the account. The public key
    /// and the credential id are what the relying party checks assertions with; they are sealed
    /// with the account's data key like every payload, and gone with it at the purge.
    public struct PasskeyRegistered: Codable, Sendable, Equatable {
        /// The service's own id of the passkey (the API's `id`).
        public var passkeyID: UUID
        /// The authenticator's credential id, base64url.
        public var credentialID: String
        /// The credential's COSE public key, base64url.
        public var publicKey: String
        /// Its COSE algorithm (-7 ES256, -8 EdDSA, -257 RS256).
        public var algorithm: Int
        public var signCount: Int64
        public var name: String
        /// The account's WebAuthn user handle, base64url: the same for every passkey of the account.
        public var userHandle: String
        /// Whether the passkey may be synced (backup eligible) and is (backed up), as registered.
        public var backupEligible: Bool
        public var backedUp: Bool
        public var transports: [String]
        /// The attestation statement's format (`none`, `packed`).
        public var attestationFormat: String
        /// The session that registered it.
        public var sessionID: UUID?
        enum CodingKeys: String, CodingKey {
            case passkeyID = "passkey_id", credentialID = "credential_id", publicKey = "public_key", algorithm
            case signCount = "sign_count", name, userHandle = "user_handle", backupEligible = "backup_eligible"
            case backedUp = "backed_up", transports, attestationFormat = "attestation_format", sessionID = "session_id"
        }

        public init(
            passkeyID: UUID, credentialID: String, publicKey: String, algorithm: Int, signCount: Int64, name: String, userHandle: String,
            backupEligible: Bool, backedUp: Bool, transports: [String], attestationFormat: String, sessionID: UUID?
        ) {
            self.passkeyID = passkeyID
            self.credentialID = credentialID
            self.publicKey = publicKey
            self.algorithm = algorithm
            self.signCount = signCount
            self.name = name
            self.userHandle = userHandle
            self.backupEligible = backupEligible
            self.backedUp = backedUp
            self.transports = transports
            self.attestationFormat = attestationFormat
            self.sessionID = sessionID
        }
    }

    /// The person renamed a passkey.
    public struct PasskeyRenamed: Codable, Sendable, Equatable {
        public var passkeyID: UUID
        public var name: String
        enum CodingKeys: String, CodingKey { case passkeyID = "passkey_id", name }

        public init(passkeyID: UUID, name: String) {
            self.passkeyID = passkeyID
            self.name = name
        }
    }

    /// A passkey's assertion was accepted: for a sign-in (`session_id` the new session) or a
    /// re-auth (the session it vouched for). The counter and backup state it reported are kept.
    public struct PasskeyUsed: Codable, Sendable, Equatable {
        public enum Purpose: String, Codable, Sendable, CaseIterable { case signIn = "sign_in", reauth }

        public var passkeyID: UUID
        public var signCount: Int64
        public var backedUp: Bool
        public var purpose: Purpose
        public var sessionID: UUID
        enum CodingKeys: String, CodingKey {
            case passkeyID = "passkey_id", signCount = "sign_count", backedUp = "backed_up", purpose, sessionID = "session_id"
        }

        public init(passkeyID: UUID, signCount: Int64, backedUp: Bool, purpose: Purpose, sessionID: UUID) {
            self.passkeyID = passkeyID
            self.signCount = signCount
            self.backedUp = backedUp
            self.purpose = purpose
            self.sessionID = sessionID
        }
    }

    /// A passkey is no longer a way in.
    public struct PasskeyRemoved: Codable, Sendable, Equatable {
        public var passkeyID: UUID
        /// Why, when not the person's removal (as for `PhoneRemoved`).
        public var reason: MethodRemovalReason?
        enum CodingKeys: String, CodingKey { case passkeyID = "passkey_id", reason }

        public init(passkeyID: UUID, reason: MethodRemovalReason? = nil) {
            self.passkeyID = passkeyID
            self.reason = reason
        }
    }

    /// An assertion whose signature counter did not grow: the authenticator may have been
    /// cloned. The sign-in or re-auth was refused and the owner is told (`passkey_suspect`).
    public struct PasskeySuspect: Codable, Sendable, Equatable {
        public var passkeyID: UUID
        public var storedSignCount: Int64
        public var presentedSignCount: Int64
        enum CodingKeys: String, CodingKey {
            case passkeyID = "passkey_id", storedSignCount = "stored_sign_count", presentedSignCount = "presented_sign_count"
        }

        public init(passkeyID: UUID, storedSignCount: Int64, presentedSignCount: Int64) {
            self.passkeyID = passkeyID
            self.storedSignCount = storedSignCount
            self.presentedSignCount = presentedSignCount
        }
    }
}

extension AccountEvent {
    /// The passkeys area's events in the catalogue (`AccountEvent.registry`): each with its
    /// payload type and the commands whose decision appends it.
    static let passkeysRegistrations: [Registration] = [
        .init(.passkeyRegistered, PasskeyRegistered.self, AccountEvent.passkeyRegistered, emittedBy: ["registerPasskey"]),
        .init(.passkeyRenamed, PasskeyRenamed.self, AccountEvent.passkeyRenamed, emittedBy: ["renamePasskey"]),
        .init(.passkeyUsed, PasskeyUsed.self, AccountEvent.passkeyUsed, emittedBy: ["signInWithPasskey", "grantReauthByPasskey"]),
        .init(
            .passkeyRemoved, PasskeyRemoved.self, AccountEvent.passkeyRemoved,
            emittedBy: ["removePasskey", "revertEmail", "resetPassword", "support"]),
        .init(
            .passkeySuspect, PasskeySuspect.self, AccountEvent.passkeySuspect,
            emittedBy: ["signInWithPasskey", "grantReauthByPasskey", "recordPasskeySuspect"]),
    ]
}
