import HTTPTypes
import Hummingbird
import LedgerCore

/// Resolves the client's address once a request (`ClientAddress.resolve`) and puts it on the
/// context, for the per-address limits and the event metadata alike.
public struct ClientAddressMiddleware: RouterMiddleware {
    public typealias Context = LedgerRequestContext

    let trustedProxies: [CIDR]

    public init(trustedProxies: [CIDR]) {
        self.trustedProxies = trustedProxies
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.clientAddress = ClientAddress.resolve(
            remote: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor], trustedProxies: trustedProxies)
        return try await next(request, context)
    }
}
