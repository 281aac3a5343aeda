import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// `{id_token, nonce?, display_name?, authorization_code?, link_token?}`: a name the app got from
/// the provider (Apple gives it once); a missing one never blocks.
struct ProviderSignInRequest: Decodable {
    let idToken: String
    let nonce: String?
    let displayName: String?
    let linkToken: String?
    let authorizationCode: String?
    enum CodingKeys: String, CodingKey {
        case idToken = "id_token", nonce, displayName = "display_name", linkToken = "link_token", authorizationCode = "authorization_code"
    }
}

struct ProviderTokenRequest: Decodable {
    let idToken: String
    enum CodingKeys: String, CodingKey { case idToken = "id_token" }
}

struct LinkRequest: Decodable {
    let provider: String
    let idToken: String
    let authorizationCode: String?
    enum CodingKeys: String, CodingKey { case provider, idToken = "id_token", authorizationCode = "authorization_code" }
}

struct DisconnectRequest: Decodable {
    let provider: String
}
