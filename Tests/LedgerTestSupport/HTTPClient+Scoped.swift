import AsyncHTTPClient

/// Runs `body` with an HTTP client of its own and shuts it down however `body` ends: a client
/// dropped without `shutdown()` traps, which would turn one failed expectation into a crash
/// of the whole test run.
public func withHTTPClient<Value>(_ body: (HTTPClient) async throws -> Value) async throws -> Value {
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    do {
        let value = try await body(client)
        try await client.shutdown()
        return value
    } catch {
        try? await client.shutdown()
        throw error
    }
}
