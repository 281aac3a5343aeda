import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

struct PasswordRequest: Decodable {
    let password: String
}
