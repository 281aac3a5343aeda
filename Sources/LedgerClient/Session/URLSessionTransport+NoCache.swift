import Foundation
import OpenAPIURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension URLSessionTransport {
    /// A transport whose answers are never cached: `/me` and the rest are personal, and a cached
    /// answer would outlive a sign-out (URLSession's shared cache keeps what has no `no-store`).
    public static func uncached() -> URLSessionTransport {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSessionTransport(configuration: .init(session: URLSession(configuration: configuration)))
    }
}
