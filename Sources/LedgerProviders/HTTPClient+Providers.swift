import AsyncHTTPClient

extension HTTPClient {
    /// The client for Apple's and Google's token endpoints: it never follows a redirect, so an
    /// answer comes from the configured URL or not at all.
    static let providers = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
    /// The same for their JWKS, on a pool of its own: a backlog of token calls never delays
    /// the keys every sign-in needs.
    static let providerKeys = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
}
