import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

struct SignUpRequest: Decodable {
    let email: String
    let password: String
    let displayName: String?
    let handle: String?
    enum CodingKeys: String, CodingKey { case email, password, displayName = "display_name", handle }
}

struct SignInRequest: Decodable {
    let email: String
    let password: String
}

/// `{email, password, link_token?}`.
struct LoginRequest: Decodable {
    let email: String
    let password: String
    let linkToken: String?
    enum CodingKeys: String, CodingKey { case email, password, linkToken = "link_token" }
}

struct TokenRequest: Decodable {
    let token: String
}

struct ForgotRequest: Decodable {
    let email: String
}

struct ResetRequest: Decodable {
    let token: String
    let newPassword: String
    enum CodingKeys: String, CodingKey { case token, newPassword = "new_password" }
}

struct RefreshRequest: Decodable {
    let refreshToken: String
    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
}

/// `{account_id, session_id, access_token, refresh_token, expires_in, email_verified, device_token}`.
struct SessionBody: JSONObjectBody {
    let session: AccountService.Session
    init(_ session: AccountService.Session) { self.session = session }

    var fields: [String: JSONValue] {
        [
            "account_id": .string(session.accountID.lowercased), "session_id": .string(session.sessionID.lowercased),
            "access_token": .string(session.accessToken), "refresh_token": .string(session.refreshToken),
            "expires_in": .int(Int64(session.expiresIn)), "email_verified": .bool(session.emailVerified),
            "device_token": .string(session.deviceToken),
        ]
    }
}

/// `GET /me`.
struct MeBody: JSONObjectBody {
    let state: AccountSummary
    /// The uploaded picture's address, else the initials tile's.
    let avatarURL: String
    init(_ state: AccountSummary, avatars: AvatarURLs) {
        self.state = state
        self.avatarURL = avatars.url(accountID: state.accountID, etag: state.avatarETag)
    }
    init(_ state: AccountState, avatars: AvatarURLs) { self.init(AccountSummary(state), avatars: avatars) }

    var fields: [String: JSONValue] {
        [
            "account_id": .string(state.accountID.lowercased), "user_id": .string(PublicUserID(accountID: state.accountID).description),
            "display_name": JSONValue(state.displayName), "handle": JSONValue(state.handle),
            "handle_is_temporary": .bool(state.handleIsTemporary), "email": JSONValue(state.email),
            "email_verified": .bool(state.emailVerified),
            "created_at": JSONValue(timestamp: state.createdAt), "avatar_url": .string(avatarURL),
        ]
    }
}

/// `GET /me/auth-methods`: `null` where not set.
struct AuthMethodsBody: JSONObjectBody {
    let state: AccountSummary
    init(_ state: AccountSummary) { self.state = state }

    var fields: [String: JSONValue] {
        [
            "phone": JSONValue(state.phone), "phone_region": JSONValue(state.phoneRegion),
            "email": JSONValue(state.email), "has_password": .bool(state.hasPassword), "pending_email": JSONValue(state.pendingEmail),
            "apple_linked": .bool(state.appleLinked), "google_linked": .bool(state.googleLinked),
            "email_verified": .bool(state.emailVerified),
            "password_changed_at": JSONValue(timestamp: state.passwordChangedAt),
            "mfa": .object(["totp": .bool(state.totpEnabled), "recovery_codes_left": .int(Int64(state.recoveryCodesLeft))]),
            "passkeys": .int(Int64(state.passkeys)),
        ]
    }
}
