import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

struct ChangePasswordRequest: Decodable {
    let newPassword: String
    enum CodingKeys: String, CodingKey { case newPassword = "new_password" }
}

/// `{token, new_password?}`: the password is checked only once the token is known to be live.
struct RevertRequest: Decodable {
    let token: String
    let newPassword: String?
    enum CodingKeys: String, CodingKey { case token, newPassword = "new_password" }
}

struct EmailChangeRequest: Decodable {
    let newEmail: String
    enum CodingKeys: String, CodingKey { case newEmail = "new_email" }
}
