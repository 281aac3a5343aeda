import HTTPTypes
import LedgerAccounts

extension JSONResponse {
    /// A sign-in's answer: what `body` returns, or `200 {mfa_required: true, mfa_token, methods}`
    /// when the account asked for a second factor instead of starting the session.
    static func orMFARequired(_ body: () async throws -> JSONResponse) async throws -> JSONResponse {
        do {
            return try await body()
        } catch let required as MFARequired {
            return JSONResponse(.ok, required.fields)
        }
    }

    /// A link's answer (docs/accounts.md "Links that sign in"): `fields`, with the `session` the link
    /// started, or the second factor's `mfa_required`, `mfa_token` and `methods` beside them.
    init(_ status: HTTPResponse.Status, _ fields: [String: JSONValue], signIn: AccountService.LinkSignIn?) {
        var fields = fields
        switch signIn {
        case .session(let session): fields["session"] = .object(SessionBody(session).fields)
        case .secondFactor(let required): fields.merge(required.fields) { _, challenge in challenge }
        case nil: break
        }
        self.init(status, fields)
    }

    init(_ status: HTTPResponse.Status, _ body: some JSONObjectBody, signIn: AccountService.LinkSignIn?) {
        self.init(status, body.fields, signIn: signIn)
    }
}

extension MFARequired {
    /// The second factor's challenge, as every sign-in answers it.
    var fields: [String: JSONValue] {
        ["mfa_required": .bool(true), "mfa_token": .string(token), "methods": .array(methods.map { .string($0) })]
    }
}
