import Foundation
import LedgerPostgres

/// Follows the global feed from a cursor, for ever, event by event (`FeedReader.Follower`
/// underneath: it pages through what is there, then waits for a wake-up, a commit here or a
/// NOTIFY from elsewhere, or the poll interval, and reads again).
public struct EventSubscription: AsyncSequence, Sendable {
    public typealias Element = RecordedEvent

    let follower: FeedReader.Follower
    let pollInterval: Duration

    public func makeAsyncIterator() -> Iterator {
        Iterator(follower: follower, pollInterval: pollInterval)
    }

    public struct Iterator: AsyncIteratorProtocol {
        var follower: FeedReader.Follower
        let pollInterval: Duration
        var buffer: [RecordedEvent] = []
        var bufferIndex = 0

        /// The next event; nil only when the task is cancelled.
        public mutating func next() async throws -> RecordedEvent? {
            while bufferIndex == buffer.count {
                if Task.isCancelled {
                    follower.cancel()
                    return nil
                }
                buffer = try await follower.next(idle: pollInterval)
                bufferIndex = 0
            }
            defer { bufferIndex += 1 }
            return buffer[bufferIndex]
        }
    }
}

extension EventStore {
    /// Every event committed after `cursor`, in commit order, waiting for new ones.
    public func subscribe(
        after cursor: FeedCursor = .start, pageSize: Int = 1000, pollInterval: Duration = .seconds(1),
        types: [String]? = nil
    ) -> EventSubscription {
        EventSubscription(
            follower: FeedReader(store: self, pollInterval: pollInterval).follow(from: cursor, types: types, pageSize: pageSize),
            pollInterval: pollInterval)
    }

    /// Wakes this store's followers whenever another process NOTIFYs `ledger_events`.
    /// Returns the listener so the caller can stop it.
    public func listenForRemoteCommits(url: String) -> PostgresListener {
        let listener = PostgresListener(url: url, channels: [FeedWakeups.channel])
        // Waking the followers only resumes their waits: done on the listener's thread.
        listener.onWakeup { [wakeups] in wakeups.wakeLocal() }
        listener.start()
        return listener
    }

    /// Waits until events may have been committed after `generation`, or `timeout` passes.
    public func waitForCommits(timeout: Duration) async {
        await wakeups.wait(after: wakeups.generation, timeout: timeout)
    }
}
