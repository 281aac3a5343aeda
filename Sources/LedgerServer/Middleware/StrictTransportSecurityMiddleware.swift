import HTTPTypes
import Hummingbird

/// `Strict-Transport-Security` on every answer, when the service serves HTTPS itself
/// (`LEDGER_TLS_CERT_FILE`): a browser that has seen it never asks this host over plain HTTP
/// again, so a network that strips TLS gets nothing. Outermost, so errors carry it too.
public struct StrictTransportSecurityMiddleware: RouterMiddleware {
    public typealias Context = LedgerRequestContext
    let value: String

    public init(value: String) {
        self.value = value
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.strictTransportSecurity] = value
        return response
    }
}
