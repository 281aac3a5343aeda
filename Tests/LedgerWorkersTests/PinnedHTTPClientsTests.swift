import AsyncHTTPClient
import Testing

@testable import LedgerWorkers

@Suite("Webhook pushes reuse one pinned client per host and address", .timeLimit(.minutes(10)))
struct PinnedHTTPClientsTests {
    @Test("the same host and address get the same client; a new address a new one; the count is bounded")
    func reuse() async throws {
        let clients = PinnedHTTPClients()
        let first = clients.client(host: "hooks.example.com", address: "93.184.215.14")
        #expect(clients.client(host: "hooks.example.com", address: "93.184.215.14") === first)
        let moved = clients.client(host: "hooks.example.com", address: "93.184.215.15")
        #expect(moved !== first)
        #expect(clients.client(host: "hooks.example.com", address: "93.184.215.15") === moved)
        var made: [HTTPClient] = []
        for index in 0..<(PinnedHTTPClients.capacity + 10) {
            made.append(clients.client(host: "h\(index).example.com", address: "93.184.215.14"))
        }
        #expect(clients.count == PinnedHTTPClients.capacity)
        // The oldest hosts went first: the moved host and the first ten made after it.
        #expect(clients.client(host: "h73.example.com", address: "93.184.215.14") === made[73])
        #expect(clients.retiredCount == 12)
        // Retired clients are shut down between pushes, not kept until the dispatcher stops.
        await clients.shutdownRetired()
        #expect(clients.retiredCount == 0)
        await clients.shutdown()
        #expect(clients.count == 0)
    }
}
