import Foundation

extension AccountCommand {
    /// An account brought from another system (`ledger import`, `POST /admin/accounts/import`):
    /// what that system knew of the person, already checked and normalized by the importer.
    public struct ImportedAccount: Sendable, Equatable {
        /// The system it came from (`firebase`, `auth0`, `jsonl`, or the operator's name for it)
        /// and its id there: the pair is imported once.
        public var source: String
        public var externalID: String
        /// When the other system created it, when it said.
        public var createdAt: Date?
        public var email: EmailAddress?
        public var emailVerified: Bool
        /// A verified number only: an unverified one is no way to sign in here.
        public var phone: PhoneNumber?
        public var displayName: String?
        /// The other system's hash as it came (`ForeignPasswordHash` reads it), or none.
        public var passwordHash: String?
        public var providers: [ProviderIdentityClaim]
        public var handle: Handle
        public var disabled: Bool

        public init(
            source: String, externalID: String, createdAt: Date? = nil, email: EmailAddress? = nil, emailVerified: Bool = false,
            phone: PhoneNumber? = nil, displayName: String? = nil, passwordHash: String? = nil, providers: [ProviderIdentityClaim] = [],
            handle: Handle, disabled: Bool = false
        ) {
            self.source = source
            self.externalID = externalID
            self.createdAt = createdAt
            self.email = email
            self.emailVerified = emailVerified
            self.phone = phone
            self.displayName = displayName
            self.passwordHash = passwordHash
            self.providers = providers
            self.handle = handle
            self.disabled = disabled
        }

        /// Whether the person has a way in: an address (with its password, or "Forgot
        /// password"), a phone number, or Apple or Google.
        public var hasSignInMethod: Bool { email != nil || phone != nil || !providers.isEmpty }
    }
}
