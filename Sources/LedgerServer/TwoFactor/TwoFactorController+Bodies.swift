import Foundation
import LedgerAccounts

/// `{code}`: a TOTP code.
struct TOTPCodeRequest: Decodable {
    let code: String
}

/// `{mfa_token, code}` or `{mfa_token, recovery_code}`.
struct MFAVerifyRequest: Decodable {
    let mfaToken: String
    let code: String?
    let recoveryCode: String?
    enum CodingKeys: String, CodingKey { case mfaToken = "mfa_token", code, recoveryCode = "recovery_code" }
}

/// `{recovery_codes: [...]}`, shown once.
struct RecoveryCodesBody: JSONObjectBody {
    let codes: [String]
    var fields: [String: JSONValue] { ["recovery_codes": .array(codes.map { .string($0) })] }
}
