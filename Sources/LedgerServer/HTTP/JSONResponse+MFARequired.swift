import LedgerAccounts

extension JSONResponse {
    /// A sign-in's answer: what `body` returns, or `200 {mfa_required: true, mfa_token, methods}`
    /// when the account asked for a second factor instead of starting the session.
    static func orMFARequired(_ body: () async throws -> JSONResponse) async throws -> JSONResponse {
        do {
            return try await body()
        } catch let required as MFARequired {
            return JSONResponse(
                .ok,
                [
                    "mfa_required": .bool(true), "mfa_token": .string(required.token),
                    "methods": .array(required.methods.map { .string($0) }),
                ])
        }
    }
}
