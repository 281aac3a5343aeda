import AsyncHTTPClient
import Foundation
import LedgerClient
import OpenAPIAsyncHTTPClient

extension Client {
    /// A backend's client over AsyncHTTPClient: every call carries `Authorization: Bearer <apiKey>`.
    public static func ledger(serverURL: URL, apiKey: String, httpClient: HTTPClient = .shared) -> Client {
        Client(
            serverURL: serverURL, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient)),
            middlewares: [APIKeyMiddleware(apiKey: apiKey)])
    }
}
