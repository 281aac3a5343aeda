import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Adds the session to every call of `LedgerSession.client`: `Authorization` with an access
/// token refreshed first when near its end, `X-Device-Token`, and `X-Reauth-Token` while a
/// re-auth grant is kept. A header the caller set is left as it is.
struct SessionMiddleware: ClientMiddleware {
    let keeper: TokenKeeper

    /// Operations that start a session: they never need the old one's token.
    static let signIns: Set<String> = [
        "emailSignUp", "emailSignIn", "refreshSession", "signInApple", "signInGoogle", "passkeySignIn", "verifyMFA",
    ]

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.headerFields[.authorization] == nil, !Self.signIns.contains(operationID),
            let token = try await keeper.accessToken()
        {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        if let name = HTTPField.Name("X-Device-Token"), request.headerFields[name] == nil,
            let device = try await keeper.deviceToken()
        {
            request.headerFields[name] = device
        }
        if let name = HTTPField.Name("X-Reauth-Token"), request.headerFields[name] == nil, let grant = await keeper.reauthToken {
            request.headerFields[name] = grant
        }
        return try await next(request, body, baseURL)
    }
}
