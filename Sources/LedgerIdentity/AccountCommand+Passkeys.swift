import Foundation

extension AccountCommand {
    /// A passkey the relying party verified (`LedgerWebAuthn`), with the ids made for it.
    public struct NewPasskey: Sendable, Equatable {
        public var passkeyID: UUID
        /// base64url of the credential id and of the COSE public key.
        public var credentialID: String
        public var publicKey: String
        public var algorithm: Int
        public var signCount: Int64
        public var name: String
        /// The user handle the registration's options carried (base64url): the account's own
        /// when it has one, else the new one this registration gives it.
        public var userHandle: String
        public var backupEligible: Bool
        public var backedUp: Bool
        public var transports: [String]
        public var attestationFormat: String

        public init(
            passkeyID: UUID, credentialID: String, publicKey: String, algorithm: Int, signCount: Int64, name: String, userHandle: String,
            backupEligible: Bool, backedUp: Bool, transports: [String], attestationFormat: String
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
        }
    }

    /// What a verified assertion reported: the passkey that signed, its counter and backup state.
    public struct PasskeyAssertion: Sendable, Equatable {
        public var passkeyID: UUID
        public var signCount: Int64
        public var backedUp: Bool

        public init(passkeyID: UUID, signCount: Int64, backedUp: Bool) {
            self.passkeyID = passkeyID
            self.signCount = signCount
            self.backedUp = backedUp
        }
    }
}
