import Foundation

/// How followers read the feed, beyond one page: a page that waits for events (long-polling),
/// a long page read in slices ahead of its consumer, and following as commits arrive. The HTTP
/// layer renders what these return and nothing more.
///
/// Every page and slice is what a reader following `nextCursor` with that limit would get, so
/// each keeps the feed's guarantee (docs/architecture.md "Event store rules"): every event once,
/// one order for every reader.
public struct FeedReader: Sendable {
    public let store: any FeedSource
    /// How often an idle reader re-reads when no wake-up came (a NOTIFY can be missed, and a
    /// commit can be hidden behind an older running transaction).
    public let pollInterval: Duration
    /// Long pages are read in slices of this many events, each its own query.
    public let sliceSize: Int

    public init(store: any FeedSource, pollInterval: Duration = .milliseconds(250), sliceSize: Int = 1000) {
        self.store = store
        self.pollInterval = pollInterval
        self.sliceSize = sliceSize
    }

    /// At most `limit` events after `cursor`; when there are none, waits up to `wait` for some.
    /// Stops waiting early when the task is cancelled or `stopWaiting` says so (a shutdown).
    public func page(
        after cursor: FeedCursor, limit: Int, types: [String]?, waitingUpTo wait: Duration = .zero,
        stopWaiting: @Sendable () -> Bool = { false }
    ) async throws -> FeedPage {
        let deadline = ContinuousClock.now + wait
        while true {
            let generation = store.commitGeneration
            let page = try await store.readAll(after: cursor, limit: limit, types: types)
            let now = ContinuousClock.now
            if !page.events.isEmpty || now >= deadline || Task.isCancelled || stopWaiting() { return page }
            await store.waitForCommit(after: generation, timeout: min(pollInterval, now.duration(to: deadline)))
        }
    }

    /// The rest of a long page, `remaining` events after `cursor`, slice by slice: each slice is
    /// read (and passed through `transform`, such as rendering) while the one before it is
    /// consumed, so the database, the service and the client work at once instead of in turn.
    public func slices<Output: Sendable>(
        after cursor: FeedCursor, remaining: Int, types: [String]?, transform: @escaping @Sendable ([RecordedEvent]) -> Output
    ) -> Slices<Output> {
        Slices(pending: Slices.read(after: cursor, remaining: remaining, types: types, sliceSize: sliceSize, store: store, transform))
    }

    /// The slices of a long page, in order. When the consumer stops early, reads already started
    /// run to the page's end at most and are dropped.
    public struct Slices<Output: Sendable>: Sendable {
        public struct Slice: Sendable {
            public let nextCursor: FeedCursor
            public let output: Output
            let following: Task<Slice, any Error>?
        }

        var pending: Task<Slice, any Error>?

        /// The next slice; nil after the last (a short slice ends the page).
        public mutating func next() async throws -> Slice? {
            guard let task = pending else { return nil }
            pending = nil
            let slice = try await task.value
            pending = slice.following
            return slice
        }

        /// Stops the reads still running.
        public func cancel() {
            pending?.cancel()
        }

        static func read(
            after cursor: FeedCursor, remaining: Int, types: [String]?, sliceSize: Int, store: any FeedSource,
            _ transform: @escaping @Sendable ([RecordedEvent]) -> Output
        ) -> Task<Slice, any Error>? {
            guard remaining > 0 else { return nil }
            return Task {
                let limit = min(remaining, sliceSize)
                let page = try await store.readAll(after: cursor, limit: limit, types: types)
                // The next read starts as soon as these rows arrived: reading never waits for the transform.
                let following =
                    page.events.count < limit || Task.isCancelled
                    ? nil
                    : read(
                        after: page.nextCursor, remaining: remaining - limit, types: types, sliceSize: sliceSize, store: store, transform)
                return Slice(nextCursor: page.nextCursor, output: transform(page.events), following: following)
            }
        }
    }

    /// Follows the feed from `cursor` as commits arrive, a page at a time.
    public func follow(from cursor: FeedCursor, types: [String]?, pageSize: Int = 1000) -> Follower {
        Follower(reader: self, cursor: cursor, types: types, pageSize: pageSize)
    }

    /// A reader that follows the feed. While it catches up (full pages) the next page is read
    /// while this one is consumed.
    public struct Follower: Sendable {
        let reader: FeedReader
        public private(set) var cursor: FeedCursor
        let types: [String]?
        let pageSize: Int
        var prefetched: (generation: UInt64, read: Task<FeedPage, any Error>)?

        init(reader: FeedReader, cursor: FeedCursor, types: [String]?, pageSize: Int) {
            self.reader = reader
            self.cursor = cursor
            self.types = types
            self.pageSize = pageSize
        }

        /// The next events: as soon as some are committed, or none once `idle` has passed
        /// without any (so the caller can send a keep-alive or check its authorization).
        public mutating func next(idle: Duration) async throws -> [RecordedEvent] {
            let deadline = ContinuousClock.now + idle
            let store = reader.store
            while !Task.isCancelled {
                let generation: UInt64
                let page: FeedPage
                if let (prefetchedGeneration, read) = prefetched {
                    prefetched = nil
                    (generation, page) = (prefetchedGeneration, try await read.value)
                } else {
                    generation = store.commitGeneration
                    page = try await store.readAll(after: cursor, limit: pageSize, types: types)
                }
                cursor = page.nextCursor
                if !page.events.isEmpty {
                    if page.events.count == pageSize {
                        let (after, types, pageSize) = (cursor, self.types, self.pageSize)
                        prefetched = (store.commitGeneration, Task { try await store.readAll(after: after, limit: pageSize, types: types) })
                    }
                    return page.events
                }
                let now = ContinuousClock.now
                if now >= deadline { return [] }
                await store.waitForCommit(after: generation, timeout: min(reader.pollInterval, now.duration(to: deadline)))
            }
            return []
        }

        /// Stops a read still running ahead.
        public func cancel() {
            prefetched?.read.cancel()
        }
    }
}
