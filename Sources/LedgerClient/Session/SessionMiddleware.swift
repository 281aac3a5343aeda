import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Adds the session to every call of `LedgerSession.client`: `Authorization` with an access
/// token refreshed first when near its end, `X-Device-Token`, and `X-Reauth-Token` to the
/// operations that take one while a re-auth grant is kept. A header the caller set is left as it
/// is. It refuses to send anything to a service over plain http but on loopback.
struct SessionMiddleware: ClientMiddleware {
    let keeper: TokenKeeper

    /// Operations that start a session: they never need the old one's token.
    static let signIns: Set<String> = [
        "emailSignUp", "emailSignIn", "refreshSession", "signInApple", "signInGoogle", "passkeySignIn", "verifyMFA",
    ]

    /// The operations that take a re-auth grant (`X-Reauth-Token` in openapi.yaml): the grant
    /// goes to these alone (`SessionMiddlewareTests` holds the list to the generated client).
    static let takingGrant: Set<String> = [
        "addEmailWithPassword", "beginTOTP", "changePassword", "deleteAccount", "disableTOTP", "disconnectProvider",
        "linkProvider", "passkeyRegistrationOptions", "regenerateRecoveryCodes", "registerPasskey", "removeEmail",
        "removePasskey", "removePhone", "requestEmailChange", "requestOTP", "verifyOTP",
    ]

    /// Whether what this session sends to `url` stays off the wire in the clear: https, or http
    /// to this device's loopback (a development service).
    static func isPrivate(_ url: URL) -> Bool {
        if url.scheme?.lowercased() == "https" { return true }
        guard url.scheme?.lowercased() == "http", let host = url.host?.lowercased() else { return false }
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // Passwords, codes and tokens never cross a network in the clear.
        guard Self.isPrivate(baseURL) else {
            throw LedgerClientError(.insecureServer, "The service's URL must be https (or http on this device's loopback).")
        }
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
        if Self.takingGrant.contains(operationID), let name = HTTPField.Name("X-Reauth-Token"), request.headerFields[name] == nil,
            let grant = await keeper.reauthToken
        {
            request.headerFields[name] = grant
        }
        return try await next(request, body, baseURL)
    }
}
