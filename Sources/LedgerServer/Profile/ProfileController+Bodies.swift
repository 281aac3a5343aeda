import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// `PATCH /me/profile`: an absent field is left alone; `display_name: null` clears the name,
/// `locale: null` the chosen language.
struct ProfileRequest: Decodable {
    let displayName: String??
    let handle: String?
    let locale: String??

    enum CodingKeys: String, CodingKey { case displayName = "display_name", handle, locale }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        displayName = try Self.nullable(.displayName, in: container)
        handle = try container.decodeIfPresent(String.self, forKey: .handle)
        locale = try Self.nullable(.locale, in: container)
    }

    /// Absent (`.none`), `null` (`.some(nil)`) or a string.
    static func nullable(_ key: CodingKeys, in container: KeyedDecodingContainer<CodingKeys>) throws -> String?? {
        guard container.contains(key) else { return .none }
        return .some(try container.decodeNil(forKey: key) ? nil : try container.decode(String.self, forKey: key))
    }
}
