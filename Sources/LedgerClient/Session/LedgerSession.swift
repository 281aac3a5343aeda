import Foundation
import OpenAPIRuntime
import OpenAPIURLSession

/// A signed-in device's session with the ledger, around the generated `Client` (as supabase-swift
/// and Auth0.swift offer): it keeps the tokens in a `TokenStorage`, refreshes once when the
/// access token is near its end (one refresh in flight however many calls wait:
/// `RefreshStateMachine`), sends `X-Device-Token` and a live re-auth grant, and answers
/// `mfa_required` and `reauth_required` as typed results. Every operation of `openapi.yaml` is
/// `client`'s, with the session's headers added. docs/clients.md.
public final class LedgerSession: Sendable {
    /// The generated client; each call carries the session (`SessionMiddleware`).
    public let client: Client
    let keeper: TokenKeeper
    let now: @Sendable () -> Date

    /// A session with the service at `serverURL` over `transport` (URLSession with no cache by
    /// default; a server passes `AsyncHTTPClientTransport`), keeping its tokens in `storage`. An
    /// access token is refreshed `refreshMargin` seconds before its end, by `now`'s clock.
    public init(
        serverURL: URL, transport: any ClientTransport = URLSessionTransport.uncached(), storage: any TokenStorage,
        refreshMargin: TimeInterval = 60, middlewares: [any ClientMiddleware] = [],
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let plain = Client(serverURL: serverURL, transport: transport, middlewares: middlewares)
        keeper = TokenKeeper(storage: storage, refreshClient: plain, margin: refreshMargin, now: now)
        client = Client(serverURL: serverURL, transport: transport, middlewares: middlewares + [SessionMiddleware(keeper: keeper)])
        self.now = now
    }

    /// The tokens kept now (read from the storage on first use), nil when signed out.
    public var tokens: SessionTokens? {
        get async throws { try await keeper.tokens() }
    }

    /// `POST /auth/email/signup`: a new account, signed in.
    public func signUp(email: String, password: String, displayName: String? = nil) async throws -> SessionTokens {
        let sent = now()
        let device = try await keeper.deviceToken()
        let answer = try await LedgerClientError.guarding("sign-up") {
            try await client.emailSignUp(
                headers: .init(xDeviceToken: device), body: .json(.init(email: email, password: password, displayName: displayName)))
        }
        switch answer {
        case .created(let answer): return try await keep(try answer.body.json, receivedAt: sent)
        case let other: throw Self.unexpected("sign-up", other)
        }
    }

    /// `POST /auth/email/login`: a session, or the second factor's challenge.
    public func signIn(email: String, password: String) async throws -> SignInResult {
        let sent = now()
        let device = try await keeper.deviceToken()
        let answer = try await LedgerClientError.guarding("sign-in") {
            try await client.emailSignIn(headers: .init(xDeviceToken: device), body: .json(.init(email: email, password: password)))
        }
        switch answer {
        case .ok(let answer):
            switch try answer.body.json {
            case .Session(let session): return .signedIn(try await keep(session, receivedAt: sent))
            case .MFARequired(let challenge):
                return .mfaRequired(MFAChallenge(token: challenge.mfaToken, methods: challenge.methods.map(\.rawValue)))
            }
        case let other: throw Self.unexpected("sign-in", other)
        }
    }

    /// `POST /auth/mfa/verify`: finishes a sign-in with a TOTP code.
    public func completeSignIn(_ challenge: MFAChallenge, code: String) async throws -> SessionTokens {
        let sent = now()
        let answer = try await LedgerClientError.guarding("second factor") {
            try await client.verifyMFA(body: .json(.init(mfaToken: challenge.token, code: code)))
        }
        switch answer {
        case .ok(let answer): return try await keep(try answer.body.json, receivedAt: sent)
        case let other: throw Self.unexpected("second factor", other)
        }
    }

    /// Keeps a session another call answered (a link that signs in, a phone code, a provider).
    @discardableResult
    public func keep(_ session: Components.Schemas.Session, receivedAt: Date) async throws -> SessionTokens {
        let tokens = SessionTokens(session, receivedAt: receivedAt)
        try await keeper.signedIn(tokens)
        return tokens
    }

    /// `POST /auth/logout`, and forgets the tokens whatever it answers: a person who signs out
    /// offline is signed out on this device (the service's session then lapses by itself). A
    /// failure of the call is thrown after the tokens are gone.
    public func signOut() async throws {
        guard try await keeper.tokens() != nil else { return try await keeper.signedOut() }
        let answer: Operations.Logout.Output
        do {
            answer = try await LedgerClientError.guarding("sign-out") { try await client.logout() }
        } catch {
            try await keeper.signedOut()
            throw error
        }
        try await keeper.signedOut()
        switch answer {
        case .noContent, .unauthorized: break
        case let other: throw Self.unexpected("sign-out", other)
        }
    }

    /// What `403 reauth_required` asks for `action`: `GET /me/reauth-options`.
    public func reauthRequired(for action: Operations.ReauthOptions.Input.Query.ActionPayload) async throws -> ReauthRequired {
        let answer = try await LedgerClientError.guarding("re-auth options") {
            try await client.reauthOptions(query: .init(action: action))
        }
        switch answer {
        case .ok(let answer):
            let options = try answer.body.json
            return ReauthRequired(action: options.action, methods: options.methods.map(\.rawValue), lastMethod: options.lastMethod)
        case let other: throw Self.unexpected("re-auth options", other)
        }
    }

    /// Keeps a grant earned another way (the email link, a phone code, a passkey, Apple or
    /// Google): the session sends it with every call until it ends.
    public func keep(_ grant: ReauthGrant) async {
        await keeper.keep(grant)
    }

    /// `POST /auth/reauth/password`: a grant the session then sends with every sensitive call.
    public func reauthenticate(password: String) async throws -> ReauthGrant {
        let answer = try await LedgerClientError.guarding("re-auth") {
            try await client.reauthPassword(body: .json(.init(password: password)))
        }
        switch answer {
        case .ok(let answer):
            let body = try answer.body.json
            let grant = ReauthGrant(token: body.reauthToken, expiresAt: body.expiresAt)
            await keep(grant)
            return grant
        case let other: throw Self.unexpected("re-auth", other)
        }
    }

    /// `POST /auth/password/change`: done (the other sessions end), or `reauth_required` with
    /// the methods offered. The change ends every grant, this one too.
    public func changePassword(to newPassword: String) async throws -> Sensitive<String> {
        let answer = try await LedgerClientError.guarding("password change") {
            try await client.changePassword(body: .json(.init(newPassword: newPassword)))
        }
        switch answer {
        case .ok(let answer):
            await keeper.keep(nil)
            return .done(try answer.body.json.message)
        case .forbidden(let answer) where try answer.body.json.error == "reauth_required":
            await keeper.keep(nil)
            return .reauthRequired(try await reauthRequired(for: .changePassword))
        case let other: throw Self.unexpected("password change", other)
        }
    }

    /// Names the answer's case only (`unauthorized`): bodies may hold tokens.
    static func unexpected(_ call: String, _ output: Any) -> LedgerClientError {
        let answer = Mirror(reflecting: output).children.first?.label ?? "\(type(of: output))"
        return LedgerClientError(.unexpectedResponse, "The \(call) was answered \(answer).")
    }
}
