import Foundation
import LedgerCore
import LedgerCrypto

extension AccountState {
    /// A passkey of the account: what checks its assertions, and what the list shows.
    public struct Passkey: Sendable, Equatable {
        public var id: UUID
        /// The authenticator's credential id, base64url.
        public var credentialID: String
        /// The COSE public key, base64url.
        public var publicKey: String
        public var algorithm: Int
        /// The signature counter last accepted (0 for passkeys that never count, as synced ones).
        public var signCount: Int64
        public var name: String
        public var createdAt: Date
        public var lastUsedAt: Date?
        public var backupEligible: Bool
        public var backedUp: Bool
        public var transports: [String]
        /// Where it came from, for a revert's span.
        public var origin: MethodOrigin

        /// The key a credential id (base64url) is looked up by: the SHA-256 of its bytes.
        public static func lookupKey(credentialID: String) -> [UInt8] {
            SHA256.hash(Base64URL.decode(credentialID) ?? Array(credentialID.utf8))
        }

        public init(
            id: UUID, credentialID: String, publicKey: String, algorithm: Int, signCount: Int64, name: String, createdAt: Date,
            lastUsedAt: Date?, backupEligible: Bool, backedUp: Bool, transports: [String], origin: MethodOrigin
        ) {
            self.id = id
            self.credentialID = credentialID
            self.publicKey = publicKey
            self.algorithm = algorithm
            self.signCount = signCount
            self.name = name
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
            self.backupEligible = backupEligible
            self.backedUp = backedUp
            self.transports = transports
            self.origin = origin
        }
    }

    /// The account's passkeys, oldest first (the list's order).
    public var passkeysByAge: [Passkey] {
        passkeys.values.sorted { ($0.createdAt, $0.id.uuidString) < ($1.createdAt, $1.id.uuidString) }
    }

    /// The passkey with this credential id (base64url), if the account has it.
    public func passkey(credentialID: String) -> Passkey? {
        passkeys.values.first { $0.credentialID == credentialID }
    }

    /// Whether removing `passkeyID` would leave the account without a way in.
    public func isLastMethod(passkey passkeyID: UUID) -> Bool {
        passkeys[passkeyID] != nil && passkeys.count == 1 && signInMethods == [.passkey]
    }
}

/// How many passkeys one account holds at most: enough for every phone, laptop and security
/// key a person has, and a bound on what a stolen session with a grant could add.
public let maximumPasskeys = 20

/// The longest passkey name, in characters.
public let maximumPasskeyNameLength = 64
