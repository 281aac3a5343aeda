import AsyncHTTPClient
import Foundation
import LedgerClient
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime

extension LedgerSession {
    /// A session over AsyncHTTPClient (a server acting for a person, or a test).
    public convenience init(
        serverURL: URL, httpClient: HTTPClient, storage: any TokenStorage, refreshMargin: TimeInterval = 60,
        middlewares: [any ClientMiddleware] = [], now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            serverURL: serverURL, transport: AsyncHTTPClientTransport(configuration: .init(client: httpClient)),
            storage: storage, refreshMargin: refreshMargin, middlewares: middlewares, now: now)
    }
}
