import AsyncHTTPClient

extension HTTPClient {
    /// The client for every request the service makes to others (deliveries, webhooks): it
    /// never follows a redirect, so a receiver cannot point a push at an address it was not
    /// allowed to reach (docs/architecture.md "Abuse limits"). A redirect answer is a failed push.
    public static let outbound = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
}
