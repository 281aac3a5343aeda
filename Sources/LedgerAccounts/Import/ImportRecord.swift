import Foundation

/// One person from another system, in the ledger's own import shape (a line of the `jsonl`
/// format, docs/api.md "Importing accounts from another system"); Firebase's and Auth0's users
/// are read into it (`ImportFormat`).
public struct ImportRecord: Sendable, Equatable {
    /// An Apple or Google identity the person signed in with there.
    public struct Provider: Sendable, Equatable, Decodable {
        /// `google` or `apple`; anything else refuses the record.
        public var provider: String
        public var subject: String
        public var email: String?

        public init(provider: String, subject: String, email: String? = nil) {
            self.provider = provider
            self.subject = subject
            self.email = email
        }
    }

    /// The password as the other system kept it.
    public enum Password: Sendable, Equatable {
        case none
        /// A hash string `ForeignPasswordHash` may read.
        case hash(String)
        /// A form this service cannot check (`md5`, a Firebase hash without the project's hash
        /// config, …): `unsupported_hash`, unless the import skips passwords.
        case unsupported(String)
    }

    public var externalID: String
    public var email: String?
    public var emailVerified: Bool
    public var phone: String?
    /// Only a verified number becomes a way to sign in (an OTP to it would open the account).
    public var phoneVerified: Bool
    public var displayName: String?
    public var password: Password
    public var providers: [Provider]
    public var createdAt: Date?
    public var disabled: Bool

    public init(
        externalID: String, email: String? = nil, emailVerified: Bool = false, phone: String? = nil, phoneVerified: Bool = false,
        displayName: String? = nil, password: Password = .none, providers: [Provider] = [], createdAt: Date? = nil, disabled: Bool = false
    ) {
        self.externalID = externalID
        self.email = email
        self.emailVerified = emailVerified
        self.phone = phone
        self.phoneVerified = phoneVerified
        self.displayName = displayName
        self.password = password
        self.providers = providers
        self.createdAt = createdAt
        self.disabled = disabled
    }
}

extension ImportRecord {
    /// A time in milliseconds since 1970 (Firebase's `createdAt`), when it falls in years
    /// 1970 through 9999; nil otherwise.
    static func date(milliseconds: Int64) -> Date? {
        (0...253_402_300_799_999).contains(milliseconds) ? Date(timeIntervalSince1970: Double(milliseconds) / 1000) : nil
    }

    /// Whether any text of the record holds a NUL, which no column of the database can keep.
    var containsNUL: Bool {
        var texts = [externalID, email, phone, displayName].compactMap { $0 }
        texts += providers.flatMap { [$0.provider, $0.subject, $0.email ?? ""] }
        switch password {
        case .hash(let text), .unsupported(let text): texts.append(text)
        case .none: break
        }
        return texts.contains { $0.utf8.contains(0) }
    }
}

/// A record of a file, read or not: one that is not (a line that is not JSON, a wrong type, no
/// id) is refused as `invalid_record` with what could be read of its id, and the rest go on.
public enum ImportEntry: Sendable, Equatable {
    case record(ImportRecord)
    case unreadable(externalID: String?)

    public var externalID: String? {
        switch self {
        case .record(let record): return record.externalID
        case .unreadable(let externalID): return externalID
        }
    }
}
