import AsyncHTTPClient

extension HTTPClient {
    /// The client for Apple's and Google's endpoints (keys, tokens, revocations): it never
    /// follows a redirect, so an answer comes from the configured URL or not at all.
    static let providers = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
}
