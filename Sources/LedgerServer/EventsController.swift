import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerEventStore
import Logging
import ServiceLifecycle

/// The event API for backends (`events:read`): the commit-ordered feed as pages with
/// long-polling (`GET /events`) and as Server-Sent Events (`GET /events/stream`).
///
/// Guarantee: a consumer that follows `next_cursor` (or the SSE `id:`) sees every committed
/// event exactly once, in one order shared by every consumer, each stream's events in version
/// order. The feed only shows transactions older than every transaction still running, so a
/// late commit can hold it back for a moment but never makes it skip (docs/architecture.md "Event store rules").
public struct EventsController: Sendable {
    let store: EventStore
    let keys: APIKeyGuard
    let streams: StreamSlots
    /// How often an open stream checks that its key is still live: a revoked key's stream ends
    /// within this (plus the key cache's few seconds).
    let keyRecheckInterval: Duration
    /// How often an idle follower re-reads when no wake-up came (a NOTIFY can be missed, and a
    /// commit can be hidden behind an older running transaction).
    static let pollInterval: Duration = .milliseconds(250)
    /// An idle SSE connection gets a comment this often, so proxies keep it open.
    static let keepAliveInterval: Duration = .seconds(15)

    /// - Parameters:
    ///   - streamsPerKey: open `GET /events/stream` connections one key may hold on this instance.
    public init(store: EventStore, keys: APIKeyGuard, streamsPerKey: Int = 8, keyRecheckInterval: Duration = .seconds(30)) {
        self.store = store
        self.keys = keys
        self.streams = StreamSlots(perKey: streamsPerKey)
        self.keyRecheckInterval = keyRecheckInterval
    }

    /// The query of both endpoints.
    struct FeedQuery {
        static let defaultLimit = 100
        static let maximumLimit = 10_000
        static let maximumWaitSeconds = 30.0

        var after: FeedCursor = .start
        var limit = defaultLimit
        var types: [String]?
        var waitSeconds = 0.0

        init(_ request: Request) throws {
            let query = request.uri.queryParameters
            if let token = request.headers[.lastEventID] ?? query["after"].map(String.init), !token.isEmpty {
                do {
                    after = try FeedCursor(token: token)
                } catch {
                    throw APIError(.badRequest, .init("invalid_cursor"), "The cursor is not one this service issued.")
                }
            }
            if let text = query["limit"] {
                guard let value = Int(text), value >= 1 else {
                    throw APIError(.badRequest, .invalidRequest, "limit must be a whole number from 1 to \(Self.maximumLimit).")
                }
                limit = min(value, Self.maximumLimit)
            }
            if let text = query["types"] {
                let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard names.allSatisfy(NewEvent.isValidType) else {
                    throw APIError(.badRequest, .invalidRequest, "types must be event types such as account.registered, comma-separated.")
                }
                types = names.isEmpty ? nil : names
            }
            if let text = query["wait"] {
                guard let value = Double(text), value >= 0, value.isFinite else {
                    throw APIError(.badRequest, .invalidRequest, "wait must be a number of seconds from 0 to 30.")
                }
                waitSeconds = min(value, Self.maximumWaitSeconds)
            }
        }
    }

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/events") { request, context in
            try await keys.authorize(request, scope: .eventsRead)
            let query = try FeedQuery(request)
            let first = try await readWaiting(query, limit: min(query.limit, Self.sliceSize))
            let headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
            guard first.events.count == Self.sliceSize, query.limit > Self.sliceSize else {
                var body = Self.pageOpening(first.events)
                Self.appendPageEnd(first.nextCursor, to: &body)
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
            }
            let store = self.store
            let logger = context.logger
            let body = ResponseBody { writer in
                try await Self.writeSlices(startingWith: first, query: query, store: store, logger: logger, to: &writer)
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: headers, body: body)
        }
        routes.get("/events/stream") { request, _ in
            let key = try await keys.authorize(request, scope: .eventsRead)
            let query = try FeedQuery(request)
            guard let slot = streams.take(key.hash) else {
                throw APIError(
                    .tooManyRequests, .init("rate_limited"), "Too many open event streams for this API key.",
                    extra: ["retry_after": .int(30)], headers: [.retryAfter: "30"])
            }
            let (store, keys, recheck) = (self.store, self.keys, keyRecheckInterval)
            let body = ResponseBody { writer in
                defer { slot.release() }
                try await Self.stream(
                    store: store, from: query.after, types: query.types, recheckEvery: recheck,
                    stillAuthorized: { (try? await keys.authorize(request, scope: .eventsRead)) != nil }, to: &writer)
                try await writer.finish(nil)
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", HTTPField.Name("X-Accel-Buffering")!: "no"],
                body: body)
        }
        return routes
    }

    /// One page of at most `limit` events after the query's cursor; when it is empty, waits up
    /// to `wait` seconds for one.
    func readWaiting(_ query: FeedQuery, limit: Int) async throws -> FeedPage {
        let deadline = ContinuousClock.now + .milliseconds(Int(query.waitSeconds * 1000))
        while true {
            let generation = store.commitGeneration
            let page = try await store.readAll(after: query.after, limit: limit, types: query.types)
            let now = ContinuousClock.now
            if !page.events.isEmpty || now >= deadline || Task.isCancelled || Task.isShuttingDownGracefully { return page }
            await store.waitForCommit(after: generation, timeout: min(Self.pollInterval, now.duration(to: deadline)))
        }
    }

    /// Pages are read in slices of this many events, each as its own query.
    static let sliceSize = 1000

    /// Sends a page of more than one slice as it is read: the next slice is read and rendered
    /// while this one is written, so PostgreSQL, the service and the client work at once
    /// instead of in turn.
    ///
    /// Each slice is what a client following `next_cursor` with that limit would get, so the
    /// page keeps the feed's guarantee. The first slice was read before the answer started, so
    /// its errors get a normal error answer; a later slice that fails ends the page early at
    /// the last event sent (a shorter page is always allowed), and the client's next request
    /// meets the error from the start.
    static func writeSlices(
        startingWith first: FeedPage, query: FeedQuery, store: EventStore, logger: Logger,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        var nextCursor = first.nextCursor
        var pending = RenderedSlice.read(
            after: nextCursor, remaining: query.limit - first.events.count, types: query.types, store: store)
        defer { pending?.cancel() }
        var bytes = pageOpening(first.events)
        try await writer.write(ByteBuffer(bytes: bytes))
        while let task = pending {
            pending = nil
            let slice: RenderedSlice
            do {
                slice = try await task.value
            } catch {
                logger.warning("a feed page ends early: a slice failed", metadata: ["error": "\(error)"])
                break
            }
            nextCursor = slice.nextCursor
            pending = slice.following
            try await writer.write(ByteBuffer(bytes: slice.bytes))
        }
        bytes.removeAll()
        appendPageEnd(nextCursor, to: &bytes)
        try await writer.write(ByteBuffer(bytes: bytes))
    }

    /// A slice of a page, rendered as array elements that continue the page's array.
    struct RenderedSlice: Sendable {
        let nextCursor: FeedCursor
        let bytes: [UInt8]
        /// The read of the slice after this one, started as soon as this one's rows arrived
        /// (so reading never waits for rendering); nil when this slice ends the page. When the
        /// client goes away, reads already started run to the page's end at most and are dropped.
        let following: Task<RenderedSlice, any Error>?

        /// Reads and renders the next slice of a page that still has `remaining` events to go.
        static func read(
            after cursor: FeedCursor, remaining: Int, types: [String]?, store: EventStore
        ) -> Task<RenderedSlice, any Error>? {
            guard remaining > 0 else { return nil }
            return Task {
                let limit = min(remaining, sliceSize)
                let page = try await store.readAll(after: cursor, limit: limit, types: types)
                let following =
                    page.events.count < limit || Task.isCancelled
                    ? nil
                    : read(
                        after: page.nextCursor, remaining: remaining - limit, types: types, store: store)
                var bytes: [UInt8] = []
                bytes.reserveCapacity(page.events.count * 700)
                EventDocument.appendElements(page.events, to: &bytes, continuing: true)
                return RenderedSlice(nextCursor: page.nextCursor, bytes: bytes, following: following)
            }
        }
    }

    /// A page object up to and including its first events.
    static func pageOpening(_ events: [RecordedEvent]) -> [UInt8] {
        var bytes = Array(#"{"events":["#.utf8)
        EventDocument.appendElements(events, to: &bytes, continuing: false)
        return bytes
    }

    /// Closes the events array and the page object.
    static func appendPageEnd(_ nextCursor: FeedCursor, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"],"next_cursor":""#.utf8)
        nextCursor.appendToken(to: &bytes)
        bytes.append(contentsOf: #""}"#.utf8)
    }

    /// Writes events as they are committed, `id:` being each event's cursor, until the client
    /// goes away, the server shuts down, or the key is no longer live (checked every
    /// `recheckEvery`). While it catches up (full pages), the next page is read while this one
    /// is written.
    static func stream(
        store: EventStore, from start: FeedCursor, types: [String]?, recheckEvery: Duration,
        stillAuthorized: @Sendable () async -> Bool, to writer: inout any ResponseBodyWriter
    ) async throws {
        let pageSize = 1000
        var cursor = start
        var lastWrite = ContinuousClock.now
        var lastCheck = ContinuousClock.now
        var prefetched: (generation: UInt64, read: Task<FeedPage, any Error>)?
        defer { prefetched?.read.cancel() }
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pageSize * 700)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if lastCheck.duration(to: .now) >= recheckEvery {
                guard await stillAuthorized() else { return }
                lastCheck = .now
            }
            let generation: UInt64
            let page: FeedPage
            if let (prefetchedGeneration, read) = prefetched {
                prefetched = nil
                (generation, page) = (prefetchedGeneration, try await read.value)
            } else {
                generation = store.commitGeneration
                page = try await store.readAll(after: cursor, limit: pageSize, types: types)
            }
            if !page.events.isEmpty {
                cursor = page.nextCursor
                if page.events.count == pageSize {
                    let after = cursor
                    prefetched = (store.commitGeneration, Task { try await store.readAll(after: after, limit: pageSize, types: types) })
                }
                for event in page.events {
                    bytes.append(contentsOf: "id: ".utf8)
                    event.cursor.appendToken(to: &bytes)
                    bytes.append(contentsOf: "\nevent: ".utf8)
                    bytes.append(contentsOf: event.type.utf8)
                    bytes.append(contentsOf: "\ndata: ".utf8)
                    EventDocument.append(event, to: &bytes)
                    bytes.append(contentsOf: "\n\n".utf8)
                }
                try await writer.write(ByteBuffer(bytes: bytes))
                bytes.removeAll(keepingCapacity: true)
                lastWrite = .now
                continue
            }
            if lastWrite.duration(to: .now) >= keepAliveInterval {
                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                lastWrite = .now
            }
            await store.waitForCommit(after: generation, timeout: pollInterval)
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}
