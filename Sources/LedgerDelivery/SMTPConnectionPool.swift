import Foundation
import LedgerCore
import NIOPosix
import Synchronization

/// Up to `maximumConnections` connections to the relay, each a libcurl handle used by one send
/// at a time, on threads of their own.
///
/// libcurl blocks, so every send runs on this pool's `NIOThreadPool` (one thread per connection)
/// and the caller's task only awaits: no event loop and no thread of Swift's cooperative pool
/// ever waits for the relay. Idle handles are kept most-recently-used first, so a burst of sends
/// one after another rides one connection (one handshake, one AUTH), and concurrent sends open
/// more, up to the limit; further sends queue for a thread.
///
/// Call `shutdown()` before dropping it: it sends QUIT on the idle connections and stops the
/// threads.
public final class SMTPConnectionPool: Sendable {
    public let configuration: SMTPConfiguration
    let heloName: String
    private let threads: NIOThreadPool
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var idle: [SMTPConnection] = []
        var opened = 0
        var closed = false
    }

    /// `heloName`: the name given in EHLO (the sender's domain, or `localhost`).
    public init(configuration: SMTPConfiguration, heloName: String) {
        self.configuration = configuration
        self.heloName = heloName
        threads = NIOThreadPool(numberOfThreads: max(1, configuration.maximumConnections))
        threads.start()
    }

    /// Sends `message` on a connection of the pool; throws `SMTPTransferError` when libcurl or
    /// the relay refused it, `CancellationError` when the pool shut down (or the task was
    /// cancelled) before the send started.
    func send(from sender: String, to recipients: [String], message: [UInt8]) async throws {
        guard !state.withLock({ $0.closed }) else { throw CancellationError() }
        try await threads.runIfActive { [self] in
            let connection = try checkOut()
            defer { checkIn(connection) }
            try connection.send(from: sender, to: recipients, message: message)
        }
    }

    /// Connections opened so far over the pool's life (for tests and the benchmark: a burst
    /// that reused its connection opened one).
    public var connectionsOpened: Int {
        state.withLock { $0.opened }
    }

    /// Sends QUIT on the idle connections and stops the threads; sends already running finish
    /// (each bounded by the send timeout), queued ones fail with `CancellationError`.
    public func shutdown() async {
        // curl_easy_cleanup waits for the relay's answer to QUIT: the last references to the
        // idle connections are dropped on a pool thread, not here.
        let idle = IdleConnections(
            state.withLock { state in
                state.closed = true
                defer { state.idle = [] }
                return state.idle
            })
        _ = try? await threads.runIfActive { idle.drop() }
        try? await threads.shutdownGracefully()
    }

    private func checkOut() throws -> SMTPConnection {
        if let connection = state.withLock({ $0.idle.popLast() }) { return connection }
        return try SMTPConnection(configuration: configuration, heloName: heloName)
    }

    private func checkIn(_ connection: SMTPConnection) {
        let opened = connection.takeConnectionsOpened()
        // Once closed, the connection is dropped here, on this pool thread (its deinit QUITs).
        state.withLock { state in
            state.opened += opened
            if !state.closed { state.idle.append(connection) }
        }
    }
}

/// The idle connections on their way to a pool thread, where they are dropped.
private final class IdleConnections: Sendable {
    private let connections: Mutex<[SMTPConnection]>

    init(_ connections: [SMTPConnection]) {
        self.connections = Mutex(connections)
    }

    func drop() {
        connections.withLock { $0.removeAll() }
    }
}

/// The relay's connections are a member of the service group that drains them after their users stop.
extension SMTPConnectionPool: DrainingService {}
