import AsyncHTTPClient
import Foundation

/// HTTP clients that connect a host name to the address checked for it (`dnsOverride`), one per
/// host and address, kept between pushes so their connections are reused. A host that
/// resolves elsewhere later gets a new client, and past `capacity` hosts the oldest client
/// goes; either way the old client is shut down before the next push (`shutdownRetired`), so a
/// receiver behind rotating DNS cannot pile clients up.
final class PinnedHTTPClients: @unchecked Sendable {
    private let lock = NSLock()
    private var clients: [String: (address: String, client: HTTPClient)] = [:]
    /// Hosts in the order their clients were made, oldest first.
    private var order: [String] = []
    private var retired: [HTTPClient] = []
    /// Hosts kept at most (a dispatcher serves a handful of receivers).
    static let capacity = 64

    /// The client for `host` pinned to `address`.
    func client(host: String, address: String) -> HTTPClient {
        lock.withLock {
            if let kept = clients[host], kept.address == address { return kept.client }
            if let stale = clients.removeValue(forKey: host) {
                retired.append(stale.client)
                order.removeAll { $0 == host }
            }
            if clients.count >= Self.capacity, !order.isEmpty, let evicted = clients.removeValue(forKey: order.removeFirst()) {
                retired.append(evicted.client)
            }
            var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
            configuration.dnsOverride = [host: address]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[host] = (address, client)
            order.append(host)
            return client
        }
    }

    /// Hosts with a client now.
    var count: Int { lock.withLock { clients.count } }

    /// Clients replaced or evicted and not yet shut down.
    var retiredCount: Int { lock.withLock { retired.count } }

    /// Shuts down the clients replaced or evicted. The dispatcher pushes one at a time, so it
    /// calls this before each push, when none of them is in use.
    func shutdownRetired() async {
        let done: [HTTPClient] = lock.withLock {
            defer { retired.removeAll() }
            return retired
        }
        for client in done { try? await client.shutdown() }
    }

    /// Shuts every client down (the dispatcher is stopping).
    func shutdown() async {
        let all: [HTTPClient] = lock.withLock {
            defer {
                clients.removeAll()
                order.removeAll()
                retired.removeAll()
            }
            return clients.values.map(\.client) + retired
        }
        for client in all { try? await client.shutdown() }
    }
}
