import Foundation
import Logging

/// Listens on PostgreSQL channels from a dedicated connection and thread, and wakes every
/// subscriber when a notification arrives.
///
/// Notifications are hints only: after a reconnect subscribers are woken too, since
/// anything sent while the connection was down is lost. Readers must still poll.
public final class PostgresListener: @unchecked Sendable {
    private let url: String
    private let channels: [String]
    private let logger: Logger
    private let lock = NSLock()
    private var subscribers: [UUID: AsyncStream<Void>.Continuation] = [:]
    private var stopped = false
    private var thread: Thread?
    private let executor = BlockingExecutor(threads: 1)

    /// Channel names must be plain identifiers; they are quoted into `LISTEN`.
    public init(url: String, channels: [String], logger: Logger = Logger(label: "ledger.listener")) {
        precondition(channels.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } })
        self.url = url
        self.channels = channels
        self.logger = logger
    }

    public func start() {
        lock.withLock {
            guard thread == nil else { return }
            let thread = Thread { [self] in run() }
            thread.name = "ledger-listener"
            self.thread = thread
            thread.start()
        }
    }

    public func stop() {
        // Finished outside the lock: finishing runs `onTermination`, which takes the lock.
        let finishing: [AsyncStream<Void>.Continuation] = lock.withLock {
            stopped = true
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for continuation in finishing { continuation.finish() }
    }

    /// A stream that yields each time a notification (or a reconnect) happens.
    public func wakeups() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        lock.withLock {
            if stopped { continuation.finish() } else { subscribers[id] = continuation }
        }
        continuation.onTermination = { [weak self] _ in
            self?.lock.withLock { _ = self?.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func wakeAll() {
        let woken = lock.withLock { Array(subscribers.values) }
        for continuation in woken { continuation.yield() }
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
