import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerEventStore
import ServiceLifecycle

/// The event API for backends (`events:read`): the commit-ordered feed as pages with
/// long-polling (`GET /events`) and as Server-Sent Events (`GET /events/stream`).
///
/// Guarantee: a consumer that follows `next_cursor` (or the SSE `id:`) sees every committed
/// event exactly once, in one order shared by every consumer, each stream's events in version
/// order. The feed only shows transactions older than every transaction still running, so a
/// late commit can hold it back for a moment but never makes it skip (DESIGN.md §3).
public struct EventsController: Sendable {
    let store: EventStore
    let keys: APIKeyGuard
    /// How often an idle follower re-reads when no wake-up came (a NOTIFY can be missed, and a
    /// commit can be hidden behind an older running transaction).
    static let pollInterval: Duration = .milliseconds(250)
    /// An idle SSE connection gets a comment this often, so proxies keep it open.
    static let keepAliveInterval: Duration = .seconds(15)

    public init(store: EventStore, keys: APIKeyGuard) {
        self.store = store
        self.keys = keys
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
        routes.get("/events") { request, _ in
            try await keys.authorize(request, scope: .eventsRead)
            let query = try FeedQuery(request)
            let page = try await readWaiting(query)
            var body = Array(#"{"events":"#.utf8)
            body.append(contentsOf: EventDocument.jsonArray(page.events))
            body.append(contentsOf: #","next_cursor":"#.utf8)
            body.append(contentsOf: "\"\(page.nextCursor.token)\"}".utf8)
            return Response(
                status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        routes.get("/events/stream") { request, _ in
            try await keys.authorize(request, scope: .eventsRead)
            let query = try FeedQuery(request)
            let store = self.store
            let body = ResponseBody { writer in
                try await Self.stream(store: store, from: query.after, types: query.types, to: &writer)
                try await writer.finish(nil)
            }
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", HTTPField.Name("X-Accel-Buffering")!: "no"],
                body: body)
        }
        return routes
    }

    /// One page after the query's cursor; when it is empty, waits up to `wait` seconds for one.
    func readWaiting(_ query: FeedQuery) async throws -> FeedPage {
        let deadline = ContinuousClock.now + .milliseconds(Int(query.waitSeconds * 1000))
        while true {
            let generation = store.commitGeneration
            let page = try await store.readAll(after: query.after, limit: query.limit, types: query.types)
            let now = ContinuousClock.now
            if !page.events.isEmpty || now >= deadline || Task.isCancelled || Task.isShuttingDownGracefully { return page }
            await store.waitForCommit(after: generation, timeout: min(Self.pollInterval, now.duration(to: deadline)))
        }
    }

    /// Writes events as they are committed, `id:` being each event's cursor, until the client
    /// goes away or the server shuts down.
    static func stream(
        store: EventStore, from start: FeedCursor, types: [String]?, to writer: inout any ResponseBodyWriter
    ) async throws {
        var cursor = start
        var lastWrite = ContinuousClock.now
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let generation = store.commitGeneration
            let page = try await store.readAll(after: cursor, limit: 1000, types: types)
            if !page.events.isEmpty {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(page.events.count * 600)
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
                cursor = page.nextCursor
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
