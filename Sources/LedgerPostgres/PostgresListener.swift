import Foundation
import Logging
import Synchronization

/// Listens on PostgreSQL channels from a dedicated connection and thread, and wakes every
/// subscriber when a notification arrives.
///
/// Notifications are hints only: after a reconnect subscribers are woken too, since
/// anything sent while the connection was down is lost. Readers must still poll.
public final class PostgresListener: Sendable {
    private let url: String
    private let channels: [String]
    private let logger: Logger
    private let state = Mutex(State())
    private let executor = BlockingExecutor(threads: 1)

    private struct State {
        var subscribers: [UUID: AsyncStream<Void>.Continuation] = [:]
        /// Called on the listener's thread at each wake-up: for work that neither blocks nor
        /// needs a task (waking a store's own followers).
        var handlers: [@Sendable () -> Void] = []
        var stopped = false
        var started = false
    }

    /// Channel names must be plain identifiers; they are quoted into `LISTEN`.
    public init(url: String, channels: [String], logger: Logger = Logger(label: "ledger.listener")) {
        precondition(channels.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } })
        self.url = url
        self.channels = channels
        self.logger = logger
    }

    public func start() {
        let starts = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard starts else { return }
        let thread = Thread { [self] in run() }
        thread.name = "ledger-listener"
        thread.start()
    }

    public func stop() {
        // Finished outside the lock: finishing runs `onTermination`, which takes the lock.
        let finishing: [AsyncStream<Void>.Continuation] = state.withLock { state in
            state.stopped = true
            state.handlers = []
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in finishing { continuation.finish() }
    }

    /// A stream that yields each time a notification (or a reconnect) happens.
    public func wakeups() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        let stopped = state.withLock { state in
            if !state.stopped { state.subscribers[id] = continuation }
            return state.stopped
        }
        if stopped { continuation.finish() }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Calls `handler` on the listener's thread at each notification (or reconnect), until
    /// stopped: for a wake-up that needs no task of its own.
    public func onWakeup(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { state in
            if !state.stopped { state.handlers.append(handler) }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func wakeAll() {
        let (woken, handlers) = state.withLock { (Array($0.subscribers.values), $0.handlers) }
        for continuation in woken { continuation.yield() }
        for handler in handlers { handler() }
    }

    private func run() {
        var connection: PostgresConnection?
        while !isStopped {
            if connection == nil {
                do {
                    let fresh = try PostgresConnection.connectSync(url: url, executor: executor)
                    for channel in channels { try fresh.executeSync("LISTEN \"\(channel)\"", []) }
                    connection = fresh
                    wakeAll()
                } catch {
                    logger.debug("listener cannot connect yet", metadata: ["error": "\(error)"])
                    Thread.sleep(forTimeInterval: 1)
                    continue
                }
            }
            do {
                if try !connection!.waitForNotifications(timeout: 0.5).isEmpty { wakeAll() }
            } catch {
                logger.info("listener connection lost; reconnecting", metadata: ["error": "\(error)"])
                connection?.close()
                connection = nil
            }
        }
        connection?.close()
    }
}
