import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

struct ChangePasswordRequest: Decodable {
    let newPassword: String
    enum CodingKeys: String, CodingKey { case newPassword = "new_password" }
}

struct EmailChangeRequest: Decodable {
    let newEmail: String
    enum CodingKeys: String, CodingKey { case newEmail = "new_email" }
}
