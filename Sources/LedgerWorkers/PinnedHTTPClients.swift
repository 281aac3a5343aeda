import AsyncHTTPClient
import Foundation

/// HTTP clients that connect a host name to the address checked for it (`dnsOverride`), one per
/// host and address, kept between pushes so their connections are reused. A host that
/// resolves elsewhere later gets a new client; the old one is shut down with the rest when the
/// dispatcher stops, never from a task of its own.
final class PinnedHTTPClients: @unchecked Sendable {
    private let lock = NSLock()
    private var clients: [String: (address: String, client: HTTPClient)] = [:]
    private var retired: [HTTPClient] = []
    /// Hosts kept at most; past it the oldest-made clients are retired (a dispatcher serves a
    /// handful of receivers; the bound keeps a flood of subscriptions from holding thousands).
    static let capacity = 64

    /// The client for `host` pinned to `address`.
    func client(host: String, address: String) -> HTTPClient {
        lock.withLock {
            if let kept = clients[host], kept.address == address { return kept.client }
            if let stale = clients.removeValue(forKey: host) { retired.append(stale.client) }
            if clients.count >= Self.capacity, let evicted = clients.keys.first {
                retired.append(clients.removeValue(forKey: evicted)!.client)
            }
            var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
            configuration.dnsOverride = [host: address]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[host] = (address, client)
            return client
        }
    }

    /// Hosts with a client now.
    var count: Int { lock.withLock { clients.count } }

    /// Shuts every client down (the dispatcher is stopping).
    func shutdown() async {
        let all: [HTTPClient] = lock.withLock {
            defer {
                clients.removeAll()
                retired.removeAll()
            }
            return clients.values.map(\.client) + retired
        }
        for client in all { try? await client.shutdown() }
    }
}
