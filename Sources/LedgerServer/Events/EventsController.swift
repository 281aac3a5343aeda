import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerEvents
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
    let feed: FeedReader
    let keys: APIKeyGuard
    let streams: StreamSlots
    /// How often an open stream checks that its key is still live: a revoked key's stream ends
    /// within this (plus the key cache's few seconds).
    let keyRecheckInterval: Duration
    /// The CloudEvents form of this service's events (`source` = `LEDGER_EVENT_SOURCE`).
    let cloudEvents: EventForm
    /// How often an idle stream looks up from its wait (for a shutdown, a keep-alive, a recheck).
    static let idleInterval: Duration = .milliseconds(250)
    /// An idle SSE connection gets a comment this often, so proxies keep it open.
    static let keepAliveInterval: Duration = .seconds(15)

    /// - Parameters:
    ///   - streamsPerKey: open `GET /events/stream` connections one key may hold on this instance.
    ///   - eventSource: the CloudEvents `source` of the events.
    public init(
        store: any FeedSource, keys: APIKeyGuard, streamsPerKey: Int = 8, keyRecheckInterval: Duration = .seconds(30),
        eventSource: String = EventDocument.defaultCloudEventSource
    ) {
        self.cloudEvents = .cloudEvents(source: eventSource)
        self.feed = FeedReader(store: store)
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
                    throw APIError(
                        .badRequest, .invalidRequest,
                        "limit must be a whole number, at least 1 (values above \(Self.maximumLimit) are read as \(Self.maximumLimit)).")
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
            // A CloudEvents batch is a bare array: a consumer resumes from its last `ledgercursor`.
            let form = AcceptedForm.prefers(Self.cloudEventsBatch, over: "application/json", in: request) ? cloudEvents : .plain
            let page = PageShape(form)
            // The first slice is read before the answer starts, so its errors get a normal error answer.
            let first = try await feed.page(
                after: query.after, limit: min(query.limit, feed.sliceSize), types: query.types,
                waitingUpTo: .milliseconds(Int(query.waitSeconds * 1000)), stopWaiting: { Task.isShuttingDownGracefully })
            let headers: HTTPFields = [.contentType: form == .plain ? "application/json; charset=utf-8" : Self.cloudEventsBatch]
            guard first.events.count == feed.sliceSize, query.limit > feed.sliceSize else {
                var body = page.opening(first.events)
                page.appendEnd(first.nextCursor, to: &body)
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
            }
            let slices = feed.slices(after: first.nextCursor, remaining: query.limit - first.events.count, types: query.types) {
                var bytes: [UInt8] = []
                bytes.reserveCapacity($0.count * 700)
                form.appendElements($0, to: &bytes, continuing: true)
                return bytes
            }
            let logger = context.logger
            let body = ResponseBody { writer in
                try await Self.writePage(page, startingWith: first, then: slices, logger: logger, to: &writer)
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: headers, body: body)
        }
        routes.get("/events/stream") { request, _ in
            let key = try await keys.authorize(request, scope: .eventsRead)
            let query = try FeedQuery(request)
            // SSE either way: a client naming CloudEvents beside text/event-stream asks for them.
            let form = AcceptedForm.prefers(Self.cloudEvent, over: "text/event-stream", in: request, winsTies: true) ? cloudEvents : .plain
            guard let slot = streams.take(key.hash) else {
                throw APIError(
                    .tooManyRequests, .init("rate_limited"), "Too many open event streams for this API key.",
                    extra: ["retry_after": .int(30)], headers: [.retryAfter: "30"])
            }
            let (feed, keys, recheck) = (self.feed, self.keys, keyRecheckInterval)
            let body = ResponseBody { writer in
                defer { slot.release() }
                try await Self.stream(
                    feed.follow(from: query.after, types: query.types), form: form, recheckEvery: recheck,
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

    /// Sends a page of more than one slice as it is read (`FeedReader.slices`). A later slice
    /// that fails ends the page early at the last event sent (a shorter page is always allowed),
    /// and the client's next request meets the error from the start.
    static func writePage(
        _ page: PageShape, startingWith first: FeedPage, then slices: FeedReader.Slices<[UInt8]>, logger: Logger,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        var slices = slices
        defer { slices.cancel() }
        var nextCursor = first.nextCursor
        try await writer.write(ByteBuffer(bytes: page.opening(first.events)))
        while true {
            do {
                guard let slice = try await slices.next() else { break }
                nextCursor = slice.nextCursor
                try await writer.write(ByteBuffer(bytes: slice.output))
            } catch {
                logger.warning("a feed page ends early: a slice failed", metadata: ["error": "\(error)"])
                break
            }
        }
        var bytes: [UInt8] = []
        page.appendEnd(nextCursor, to: &bytes)
        try await writer.write(ByteBuffer(bytes: bytes))
    }

    /// The media types of the CloudEvents forms: a batch (the feed) and one event (an SSE message).
    static let cloudEventsBatch = "application/cloudevents-batch+json"
    static let cloudEvent = "application/cloudevents+json"

    /// What wraps a page's events: `{"events":[…],"next_cursor":"…"}` in the plain form, a bare
    /// array (a CloudEvents batch) in the other.
    struct PageShape {
        let form: EventForm
        init(_ form: EventForm) { self.form = form }

        /// The page up to and including its first events.
        func opening(_ events: [RecordedEvent]) -> [UInt8] {
            var bytes = Array((form == .plain ? #"{"events":["# : "[").utf8)
            form.appendElements(events, to: &bytes, continuing: false)
            return bytes
        }

        /// Closes the events array (and the page object).
        func appendEnd(_ nextCursor: FeedCursor, to bytes: inout [UInt8]) {
            guard form == .plain else { return bytes.append(UInt8(ascii: "]")) }
            bytes.append(contentsOf: #"],"next_cursor":""#.utf8)
            nextCursor.appendToken(to: &bytes)
            bytes.append(contentsOf: #""}"#.utf8)
        }
    }

    /// Writes events as they are committed, `id:` being each event's cursor, until the client
    /// goes away, the server shuts down, or the key is no longer live (checked every
    /// `recheckEvery`).
    static func stream(
        _ follower: FeedReader.Follower, form: EventForm = .plain, recheckEvery: Duration, stillAuthorized: @Sendable () async -> Bool,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        var follower = follower
        defer { follower.cancel() }
        var lastWrite = ContinuousClock.now
        var lastCheck = ContinuousClock.now
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
        var bytes: [UInt8] = []
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if lastCheck.duration(to: .now) >= recheckEvery {
                guard await stillAuthorized() else { return }
                lastCheck = .now
            }
            let events = try await follower.next(idle: idleInterval)
            if !events.isEmpty {
                for event in events {
                    bytes.append(contentsOf: "id: ".utf8)
                    event.cursor.appendToken(to: &bytes)
                    bytes.append(contentsOf: "\nevent: ".utf8)
                    bytes.append(contentsOf: event.type.utf8)
                    bytes.append(contentsOf: "\ndata: ".utf8)
                    form.append(event, to: &bytes)
                    bytes.append(contentsOf: "\n\n".utf8)
                }
                try await writer.write(ByteBuffer(bytes: bytes))
                bytes.removeAll(keepingCapacity: true)
                lastWrite = .now
            } else if lastWrite.duration(to: .now) >= keepAliveInterval {
                try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                lastWrite = .now
            }
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}
