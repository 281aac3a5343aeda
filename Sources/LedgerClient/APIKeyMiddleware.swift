import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Adds `Authorization: Bearer <apiKey>` to every call that has none: a backend's client (an
/// API key with the scopes it needs, such as `events:read`).
public struct APIKeyMiddleware: ClientMiddleware {
    let apiKey: String

    /// A middleware sending `apiKey`.
    public init(apiKey: String) { self.apiKey = apiKey }

    public func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.headerFields[.authorization] == nil { request.headerFields[.authorization] = "Bearer \(apiKey)" }
        return try await next(request, body, baseURL)
    }
}
