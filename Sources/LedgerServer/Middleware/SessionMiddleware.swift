import Hummingbird
import LedgerAccounts
import LedgerIdentity

/// Authenticates the request's bearer access token for the routes it guards and puts the
/// session on the context (`context.session`), so controllers only translate. A missing token
/// is `401` where a session is `required`; a wrong or ended one is `401` everywhere (a client
/// that sent one meant to be signed in).
public struct SessionMiddleware: RouterMiddleware {
    public typealias Context = LedgerRequestContext

    let accounts: AccountService
    let required: Bool

    public init(accounts: AccountService, required: Bool = true) {
        self.accounts = accounts
        self.required = required
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if request.headers[.authorization] != nil || required {
            guard let session = try await accounts.authenticate(accessToken: try AuthController.bearerToken(request)) else {
                throw AuthController.unauthorized
            }
            context.session = session
        }
        do {
            return try await next(request, context)
        } catch {
            // A signed-in call's refusal speaks the account's language (docs/accounts.md "Languages").
            // Only a refusal (4xx): a failure of the database would fail this read too; and
            // not a 413 or 429, whose point is to cost little.
            guard let session = context.session, let refusal = ErrorTranslation.apiError(for: error),
                (400..<500).contains(refusal.status.code), ![413, 429].contains(refusal.status.code),
                let language = await accounts.messageLanguage(session.accountID)
            else { throw error }
            throw ErrorInAccountLanguage(error: error, language: language)
        }
    }
}

/// An error a signed-in call met, with the language of its account's messages: the language
/// its `message` is written in before the request's `Accept-Language` (`ErrorTranslation`).
struct ErrorInAccountLanguage: Error {
    let error: any Error
    let language: Language
}

extension LedgerRequestContext {
    /// The session `SessionMiddleware` authenticated; `401` when the route has none.
    public func requireSession() throws -> SessionRef {
        guard let session else { throw AuthController.unauthorized }
        return session
    }
}
