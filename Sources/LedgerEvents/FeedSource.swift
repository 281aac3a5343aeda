/// Where a `FeedReader` reads the global feed: a page at a time, and a signal when there may
/// be more. The event store is one; a reader built on this needs no database to be tested.
public protocol FeedSource: Sendable {
    /// A counter that moves on every commit the source makes or hears of.
    var commitGeneration: UInt64 { get }

    /// At most `limit` events after `cursor` (of `types` when given), in the feed's order.
    func readAll(after cursor: FeedCursor, limit: Int, types: [String]?) async throws -> FeedPage

    /// Waits until a commit after `generation`, the timeout, or cancellation.
    func waitForCommit(after generation: UInt64, timeout: Duration) async
}
