import Hummingbird
import Logging
import ServiceLifecycle

/// Runs `router` on a free loopback port for as long as `body` runs (given the port), then
/// stops it, however `body` ends: the fakes of Twilio, Apple and Google, and webhook receivers.
public func withLoopbackServer<Value: Sendable>(
    _ router: Router<BasicRequestContext>, label: String, _ body: (Int) async throws -> Value
) async throws -> Value {
    let (portStream, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) })
    let services = ServiceGroup(services: [app], gracefulShutdownSignals: [], logger: Logger(label: label))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await services.run() }
        let value: Value
        do {
            var ports = portStream.makeAsyncIterator()
            guard let port = await ports.next() else { throw CancellationError() }
            value = try await body(port)
        } catch {
            await services.triggerGracefulShutdown()
            throw error
        }
        await services.triggerGracefulShutdown()
        try await group.waitForAll()
        return value
    }
}
