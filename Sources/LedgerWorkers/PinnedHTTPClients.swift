import AsyncHTTPClient
import Foundation
import Synchronization

/// HTTP clients that connect a host name to the address checked for it (`dnsOverride`), one per
/// host and address, kept between pushes so their connections are reused. A host that
/// resolves elsewhere later gets a new client, and past `capacity` hosts the oldest client
/// goes; either way the old client is shut down before the next push (`shutdownRetired`), so a
/// receiver behind rotating DNS cannot pile clients up.
final class PinnedHTTPClients: Sendable {
    private let state = Mutex(State())

    private struct State {
        var clients: [String: (address: String, client: HTTPClient)] = [:]
        /// Hosts in the order their clients were made, oldest first.
        var order: [String] = []
        var retired: [HTTPClient] = []
    }
    /// Hosts kept at most (a dispatcher serves a handful of receivers).
    static let capacity = 64

    /// The client for `host` pinned to `address`.
    func client(host: String, address: String) -> HTTPClient {
        state.withLock { state in
            if let kept = state.clients[host], kept.address == address { return kept.client }
            if let stale = state.clients.removeValue(forKey: host) {
                state.retired.append(stale.client)
                state.order.removeAll { $0 == host }
            }
            if state.clients.count >= Self.capacity, !state.order.isEmpty,
                let evicted = state.clients.removeValue(forKey: state.order.removeFirst())
            {
                state.retired.append(evicted.client)
            }
            var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
            configuration.dnsOverride = [host: address]
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            state.clients[host] = (address, client)
            state.order.append(host)
            return client
        }
    }

    /// Hosts with a client now.
    var count: Int { state.withLock { $0.clients.count } }

    /// Clients replaced or evicted and not yet shut down.
    var retiredCount: Int { state.withLock { $0.retired.count } }

    /// Shuts down the clients replaced or evicted. The dispatcher pushes one at a time, so it
    /// calls this before each push, when none of them is in use.
    func shutdownRetired() async {
        let done: [HTTPClient] = state.withLock { state in
            defer { state.retired.removeAll() }
            return state.retired
        }
        for client in done { try? await client.shutdown() }
    }

    /// Shuts every client down (the dispatcher is stopping).
    func shutdown() async {
        let all: [HTTPClient] = state.withLock { state in
            defer { state = State() }
            return state.clients.values.map(\.client) + state.retired
        }
        for client in all { try? await client.shutdown() }
    }
}
