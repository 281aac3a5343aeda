import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Email sign-up and sign-in, token refresh, logout, and the signed-in account's views
/// (API.md "Accounts and sessions"). Translates HTTP to `AccountService` and back.
public struct AuthController: Sendable {
    let accounts: AccountService

    public init(accounts: AccountService) {
        self.accounts = accounts
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        let signedIn = routes.group().add(middleware: SessionMiddleware(accounts: accounts))
        routes.post("/auth/email/signup") { request, context in
            let body = try await request.decodeJSON(SignUpRequest.self, context: context)
            let session = try await accounts.signUp(
                email: body.email, password: body.password, displayName: body.displayName, handle: body.handle,
                device: request.headers[.userAgent], client: context.client)
            return try JSONResponse(.created, encoding: SessionBody(session))
        }
        routes.post("/auth/email/login") { request, context in
            let body = try await request.decodeJSON(SignInRequest.self, context: context)
            let session = try await accounts.signIn(
                email: body.email, password: body.password, device: request.headers[.userAgent], client: context.client)
            return try JSONResponse(.ok, encoding: SessionBody(session))
        }
        routes.post("/auth/token/refresh") { request, context in
            let body = try await request.decodeJSON(RefreshRequest.self, context: context)
            return try JSONResponse(.ok, encoding: SessionBody(try await accounts.refresh(body.refreshToken)))
        }
        signedIn.post("/auth/logout") { request, context in
            let session = try context.requireSession()
            try await accounts.revoke(session: session, reason: "logout")
            return Response(status: .noContent)
        }
        routes.post("/auth/email/verify") { request, context in
            let body = try await request.decodeJSON(TokenRequest.self, context: context)
            let state = try await accounts.verifyEmail(token: body.token)
            return JSONResponse(.ok, ["email_verified": .bool(state.emailVerified)])
        }
        signedIn.post("/auth/email/resend-verification") { request, context in
            let session = try context.requireSession()
            try await accounts.resendVerification(session.accountID)
            return JSONResponse(.accepted, [:])
        }
        routes.post("/auth/password/forgot") { request, context in
            let body = try await request.decodeJSON(ForgotRequest.self, context: context)
            try await ErrorTranslation.singleRule { try await accounts.forgotPassword(email: body.email, client: context.client) }
            return JSONResponse(.accepted, [:])
        }
        routes.post("/auth/password/reset") { request, context in
            let body = try await request.decodeJSON(ResetRequest.self, context: context)
            try await accounts.resetPassword(token: body.token, newPassword: body.newPassword)
            return JSONResponse(.ok, ["message": .string("Password updated. Sign in with your new password.")])
        }
        routes.get("/me") { request, _ in
            JSONResponse(.ok, MeBody(try await signedInAccount(request)))
        }
        signedIn.get("/me/auth-methods") { request, context in
            JSONResponse(.ok, AuthMethodsBody(try await signedInAccount(request)))
        }
        return routes
    }

    /// The account of the request's access token, read in one query, or `401 unauthorized`.
    func signedInAccount(_ request: Request) async throws -> AccountSummary {
        guard let summary = try await accounts.summary(accessToken: try Self.bearerToken(request)) else { throw Self.unauthorized }
        return summary
    }

    static func bearerToken(_ request: Request) throws -> String {
        guard let token = request.bearerCredential else { throw unauthorized }
        return token
    }

    static let unauthorized = APIError(.unauthorized, .unauthorized, "Sign in to continue.", headers: [.wwwAuthenticate: "Bearer"])
}

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

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
    static let xReauthToken = Self("X-Reauth-Token")!
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

/// `{account_id, session_id, access_token, refresh_token, expires_in, email_verified}`.
struct SessionBody: Encodable {
    let accountID: UUID
    let sessionID: UUID
    let accessToken: String
    let refreshToken: String
    let expiresIn: Int
    let emailVerified: Bool

    init(_ session: AccountService.Session) {
        accountID = session.accountID
        sessionID = session.sessionID
        accessToken = session.accessToken
        refreshToken = session.refreshToken
        expiresIn = session.expiresIn
        emailVerified = session.emailVerified
    }

    enum CodingKeys: String, CodingKey {
        case accountID = "account_id", sessionID = "session_id", accessToken = "access_token"
        case refreshToken = "refresh_token", expiresIn = "expires_in", emailVerified = "email_verified"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accountID.lowercased, forKey: .accountID)
        try container.encode(sessionID.lowercased, forKey: .sessionID)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encode(refreshToken, forKey: .refreshToken)
        try container.encode(expiresIn, forKey: .expiresIn)
        try container.encode(emailVerified, forKey: .emailVerified)
    }
}

/// `GET /me`.
struct MeBody: JSONObjectBody {
    let state: AccountSummary
    init(_ state: AccountSummary) { self.state = state }
    init(_ state: AccountState) { self.state = AccountSummary(state) }

    var fields: [String: JSONValue] {
        [
            "account_id": .string(state.accountID.lowercased), "user_id": .string(state.accountID.lowercased),
            "display_name": JSONValue(state.displayName), "handle": JSONValue(state.handle),
            "handle_is_temporary": .bool(state.handleIsTemporary), "email": JSONValue(state.email),
            "email_verified": .bool(state.emailVerified),
            "created_at": JSONValue(timestamp: state.createdAt),
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
            "email": JSONValue(state.email), "has_password": .bool(state.hasPassword),
            "apple_linked": .bool(state.appleLinked), "google_linked": .bool(state.googleLinked),
            "email_verified": .bool(state.emailVerified),
            "password_changed_at": JSONValue(timestamp: state.passwordChangedAt),
        ]
    }
}
