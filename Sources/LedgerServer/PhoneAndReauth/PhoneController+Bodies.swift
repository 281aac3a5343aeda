import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// `{phone, purpose, country?}`: `country` is the picked region's ISO code; without it the
/// number must be international (`+995…`). For `reauth` the phone may be omitted.
struct RequestOTPRequest: Decodable {
    let phone: String?
    let purpose: String
    let country: String?
}

struct VerifyOTPRequest: Decodable {
    let requestID: String
    let code: String
    let linkToken: String?
    enum CodingKeys: String, CodingKey { case requestID = "request_id", code, linkToken = "link_token" }
}
