import Foundation
import LedgerPostgres

/// Follows the global feed from a cursor, for ever: pages through what is there, then waits for
/// a wake-up (a commit here, a NOTIFY from elsewhere) or the poll interval, and reads again.
///
/// Pull-based: nothing is read ahead of the consumer beyond one page.
public struct EventSubscription: AsyncSequence, Sendable {
    public typealias Element = RecordedEvent

    let store: EventStore
    let start: FeedCursor
    let pageSize: Int
    let pollInterval: Duration
    let types: [String]?

    public func makeAsyncIterator() -> Iterator {
        Iterator(store: store, cursor: start, pageSize: pageSize, pollInterval: pollInterval, types: types)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let store: EventStore
        var cursor: FeedCursor
        let pageSize: Int
        let pollInterval: Duration
        let types: [String]?
        var buffer: [RecordedEvent] = []
        var bufferIndex = 0

        /// The next event; nil only when the task is cancelled.
        public mutating func next() async throws -> RecordedEvent? {
            while !Task.isCancelled {
                if bufferIndex < buffer.count {
                    let event = buffer[bufferIndex]
                    bufferIndex += 1
                    cursor = event.cursor
                    return event
                }
                let generation = store.wakeups.generation
                let page = try await store.readAll(after: cursor, limit: pageSize, types: types)
                if page.events.isEmpty {
                    cursor = page.nextCursor
                    await store.wakeups.wait(after: generation, timeout: pollInterval)
                } else {
                    buffer = page.events
                    bufferIndex = 0
                }
            }
            return nil
        }
    }
}

extension EventStore {
    /// Every event committed after `cursor`, in commit order, waiting for new ones.
    public func subscribe(
        after cursor: FeedCursor = .start, pageSize: Int = 1000, pollInterval: Duration = .seconds(1),
        types: [String]? = nil
    ) -> EventSubscription {
        EventSubscription(store: self, start: cursor, pageSize: pageSize, pollInterval: pollInterval, types: types)
    }

    /// Wakes this store's followers whenever another process NOTIFYs `ledger_events`.
    /// Returns the listener so the caller can stop it.
    public func listenForRemoteCommits(url: String) -> PostgresListener {
        let listener = PostgresListener(url: url, channels: [FeedWakeups.channel])
        let wakeups = self.wakeups
        let stream = listener.wakeups()
        Task {
            for await _ in stream { wakeups.wakeLocal() }
        }
        listener.start()
        return listener
    }

    /// Waits until events may have been committed after `generation`, or `timeout` passes.
    public func waitForCommits(timeout: Duration) async {
        await wakeups.wait(after: wakeups.generation, timeout: timeout)
    }
}
