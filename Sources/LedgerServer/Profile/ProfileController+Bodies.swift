import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// `PATCH /me/profile`: an absent field is left alone; `display_name: null` clears the name.
struct ProfileRequest: Decodable {
    let displayName: String??
    let handle: String?

    enum CodingKeys: String, CodingKey { case displayName = "display_name", handle }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        displayName =
            container.contains(.displayName)
            ? .some(try container.decodeNil(forKey: .displayName) ? nil : try container.decode(String.self, forKey: .displayName)) : .none
        handle = try container.decodeIfPresent(String.self, forKey: .handle)
    }
}
