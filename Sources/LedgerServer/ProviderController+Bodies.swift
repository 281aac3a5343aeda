import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// `{id_token, nonce?, display_name?}`: a name the app got from the provider (Apple gives it
/// once); a missing one never blocks.
struct ProviderSignInRequest: Decodable {
    let idToken: String
    let nonce: String?
    let displayName: String?
    let linkToken: String?
    enum CodingKeys: String, CodingKey { case idToken = "id_token", nonce, displayName = "display_name", linkToken = "link_token" }
}

struct ProviderTokenRequest: Decodable {
    let idToken: String
    enum CodingKeys: String, CodingKey { case idToken = "id_token" }
}

struct LinkRequest: Decodable {
    let provider: String
    let idToken: String
    enum CodingKeys: String, CodingKey { case provider, idToken = "id_token" }
}

struct DisconnectRequest: Decodable {
    let provider: String
}
