import Foundation
import LedgerCore
import LedgerIdentity

/// The files an import reads (docs/api.md "Importing accounts from another system"): Firebase's
/// `auth:export` JSON, Auth0's bulk-import JSON, and the ledger's own JSON lines. Each record
/// is read on its own: one that does not read is `unreadable` and the others go on.
public enum ImportFormat: String, Sendable, CaseIterable, Decodable {
    case firebase, auth0, jsonl

    /// The file will not read at all (not JSON, not the format's shape): exit 2, nothing imported.
    public struct Unreadable: Error, Sendable, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// Every record of a whole Firebase or Auth0 file (or of JSON lines).
    public func entries(_ data: Data, hashConfig: FirebaseHashConfig? = nil) throws -> [ImportEntry] {
        switch self {
        case .firebase:
            guard let file = try? JSONDecoder().decode(FirebaseFile.self, from: data) else {
                throw Unreadable(description: "not a Firebase auth:export file: expected {\"users\": [...]}")
            }
            return file.users.map { $0.entry(hashConfig: hashConfig) }
        case .auth0:
            guard let users = try? JSONDecoder().decode([Lenient<Auth0User>].self, from: data) else {
                throw Unreadable(description: "not an Auth0 bulk-import file: expected a JSON array of users")
            }
            return users.map { $0.entry(hashConfig: hashConfig) }
        case .jsonl:
            return data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).compactMap(Self.jsonLine)
        }
    }

    /// The records of a JSON array of this format's users (a request's `users`): Firebase's user
    /// objects, Auth0's, or the ledger's own lines as objects.
    public func entries(array data: Data, hashConfig: FirebaseHashConfig? = nil) throws -> [ImportEntry] {
        func read<User: ImportedUser>(_: User.Type) throws -> [ImportEntry] {
            try JSONDecoder().decode([Lenient<User>].self, from: data).map { $0.entry(hashConfig: hashConfig) }
        }
        switch self {
        case .firebase: return try read(FirebaseUser.self)
        case .auth0: return try read(Auth0User.self)
        case .jsonl: return try read(LedgerLine.self)
        }
    }

    /// Reads a line: the service's own decoder (a tenth of Foundation's cost a record, depth
    /// bounded), refusing a NUL and a key named twice (two readers could take either copy).
    static let lineDecoder = JSONPayloadDecoder(parseDate: { _ in nil }, refusesNUL: true, refusesDuplicateKeys: true)

    /// One line of the `jsonl` format; nil for a blank line.
    public static func jsonLine(_ line: Data.SubSequence) -> ImportEntry? {
        guard line.contains(where: { !($0 == 32 || $0 == 9 || $0 == 13) }) else { return nil }
        guard let lenient = try? lineDecoder.decode(Lenient<LedgerLine>.self, from: Array(line)) else {
            return .unreadable(externalID: nil)
        }
        return lenient.entry(hashConfig: nil)
    }
}

/// A user as one of the formats writes it, read into the ledger's shape.
protocol ImportedUser: Decodable {
    func record(hashConfig: FirebaseHashConfig?) -> ImportRecord
}

extension Lenient where Value: ImportedUser {
    /// The record, or the id of one that did not read.
    func entry(hashConfig: FirebaseHashConfig?) -> ImportEntry {
        value.map { .record($0.record(hashConfig: hashConfig)) } ?? .unreadable(externalID: externalID)
    }
}

/// A record that decodes or not, without failing the array around it; with its id when that much reads.
struct Lenient<Value: Decodable>: Decodable {
    let value: Value?
    let externalID: String?

    init(from decoder: any Decoder) throws {
        value = try? Value(from: decoder)
        let container = try? decoder.container(keyedBy: AnyKey.self)
        externalID =
            ["external_id", "localId", "user_id"].lazy.compactMap { key in
                (try? container?.decodeIfPresent(String.self, forKey: AnyKey(key))) ?? nil
            }.first
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// A line of the ledger's own format.
struct LedgerLine: ImportedUser {
    let external_id: String
    let email: String?
    let email_verified: Bool?
    let phone: String?
    let phone_verified: Bool?
    let display_name: String?
    let password_hash: String?
    let providers: [ImportRecord.Provider]?
    let created_at: String?
    let disabled: Bool?

    func record(hashConfig: FirebaseHashConfig?) -> ImportRecord {
        ImportRecord(
            externalID: external_id, email: email, emailVerified: email_verified ?? false, phone: phone,
            phoneVerified: phone_verified ?? false, displayName: display_name, password: password_hash.map { .hash($0) } ?? .none,
            providers: providers ?? [], createdAt: created_at.flatMap(RFC3339.parse), disabled: disabled ?? false)
    }
}

/// Firebase's `firebase auth:export users.json --format=JSON`.
struct FirebaseFile: Decodable {
    let users: [Lenient<FirebaseUser>]
}

struct FirebaseUser: ImportedUser {
    struct ProviderInfo: Decodable {
        let providerId: String
        let rawId: String?
        let email: String?
    }
    let localId: String
    let email: String?
    let emailVerified: Bool?
    let passwordHash: String?
    let salt: String?
    let phoneNumber: String?
    let displayName: String?
    let providerUserInfo: [ProviderInfo]?
    /// Milliseconds since 1970, as a string.
    let createdAt: String?
    let disabled: Bool?

    func record(hashConfig: FirebaseHashConfig?) -> ImportRecord {
        let password: ImportRecord.Password
        if let passwordHash, !passwordHash.isEmpty {
            password =
                hashConfig.flatMap { $0.encoded(passwordHash: passwordHash, salt: salt ?? "") }.map { .hash($0) }
                ?? .unsupported("firebase_scrypt")
        } else {
            password = .none
        }
        let providers = (providerUserInfo ?? []).compactMap { info -> ImportRecord.Provider? in
            // `password` and `phone` are the address and number themselves; others are not kept here.
            guard let name = ["google.com": "google", "apple.com": "apple"][info.providerId] else { return nil }
            return ImportRecord.Provider(provider: name, subject: info.rawId ?? "", email: info.email)
        }
        return ImportRecord(
            externalID: localId, email: email, emailVerified: emailVerified ?? false, phone: phoneNumber,
            // Firebase keeps a number only once an SMS code proved it.
            phoneVerified: phoneNumber != nil, displayName: displayName, password: password, providers: providers,
            createdAt: createdAt.flatMap { Int64($0) }.flatMap(ImportRecord.date(milliseconds:)), disabled: disabled ?? false)
    }
}

/// Auth0's bulk-import user (https://auth0.com/docs/manage-users/user-migration/bulk-user-import-database-schema-and-examples).
struct Auth0User: ImportedUser {
    struct CustomHash: Decodable {
        struct Hash: Decodable {
            let value: String
            let encoding: String?
        }
        let algorithm: String
        let hash: Hash
    }
    struct Identity: Decodable {
        let provider: String
        let user_id: String
    }
    let user_id: String?
    let email: String?
    let email_verified: Bool?
    let name: String?
    let given_name: String?
    let family_name: String?
    let phone_number: String?
    let phone_verified: Bool?
    let password_hash: String?
    let custom_password_hash: CustomHash?
    let identities: [Identity]?
    let created_at: String?
    let blocked: Bool?

    func record(hashConfig: FirebaseHashConfig?) -> ImportRecord {
        let password: ImportRecord.Password
        if let password_hash {
            password = .hash(password_hash)
        } else if let custom = custom_password_hash {
            // Auth0's bcrypt, argon2 and pbkdf2 values are the crypt and PHC strings themselves;
            // digests (md5, sha1, sha256, …) and other encodings are not password hashes this
            // service will keep.
            let checkable = ["bcrypt", "argon2", "pbkdf2"].contains(custom.algorithm) && (custom.hash.encoding ?? "utf8") == "utf8"
            password = checkable ? .hash(custom.hash.value) : .unsupported(custom.algorithm)
        } else {
            password = .none
        }
        let providers = (identities ?? []).compactMap { identity -> ImportRecord.Provider? in
            guard let name = ["google-oauth2": "google", "apple": "apple"][identity.provider] else { return nil }
            return ImportRecord.Provider(provider: name, subject: identity.user_id)
        }
        let fullName = [given_name, family_name].compactMap { $0 }.joined(separator: " ")
        return ImportRecord(
            // No id, no record: an address in its place would be kept, keyed, after a purge.
            externalID: user_id ?? "", email: email, emailVerified: email_verified ?? false, phone: phone_number,
            phoneVerified: phone_verified ?? false, displayName: name ?? (fullName.isEmpty ? nil : fullName), password: password,
            providers: providers, createdAt: created_at.flatMap(RFC3339.parse), disabled: blocked ?? false)
    }
}
