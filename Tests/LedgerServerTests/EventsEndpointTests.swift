import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerEventStore
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

/// Follows `GET /events` from `after` until a page comes back empty; returns every event seen.
func followFeed(
    _ client: some TestClientProtocol, key: String, after: String? = nil, limit: Int = 3, types: String? = nil
) async throws -> (events: [[String: Any]], cursor: String?) {
    var seen: [[String: Any]] = []
    var cursor = after
    while true {
        var uri = "/events?limit=\(limit)"
        if let cursor { uri += "&after=\(cursor)" }
        if let types { uri += "&types=\(types)" }
        let page = try await call(client, .get, uri, token: key, path: "/events")
        #expect(page.status == .ok, "\(page.body)")
        let events = try #require(page.body["events"] as? [[String: Any]])
        let next = try #require(page.string("next_cursor"))
        if events.isEmpty {
            if let cursor { #expect(next == cursor) }
            return (seen, next)
        }
        #expect(next == events.last?["cursor"] as? String)
        seen += events
        cursor = next
    }
}

@Suite("HTTP: the event feed", .timeLimit(.minutes(10)))
struct EventsEndpointTests {
    @Test("pages follow the cursor: every event once, in commit order, stream versions in order, no secrets' hashes")
    func feedPages() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            let holds = try await services.apiKeys.create(name: "holds", scopes: [.holdsWrite]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                _ = try await signUp(client, email: "ana@example.com")
                _ = try await signUp(client, email: "bob@example.com")
                let stored = Int(try #require(try await db.client.query("SELECT count(*) FROM events")[0].int(0)))
                try await services.eventStore.waitForFeed(count: stored)

                let (seen, _) = try await followFeed(client, key: reader)
                let ids = seen.compactMap { $0["event_id"] as? String }
                let commitOrder = try await db.client.query("SELECT event_id FROM events ORDER BY tx_id, global_position")
                #expect(ids == (try commitOrder.rows.map { try #require(try $0.uuid(0)).lowercased }))
                var versions: [String: Int] = [:]
                for event in seen {
                    let stream = try #require(event["stream_id"] as? String)
                    let version = try #require(event["version"] as? Int)
                    #expect(version == (versions[stream] ?? 0) + 1)
                    versions[stream] = version
                    let data = try #require(event["data"] as? [String: Any])
                    #expect(!data.keys.contains { $0 == "password_hash" || $0.hasSuffix("_sha256") }, "\(event["type"] ?? "")")
                    // Ids in the data are in the envelope's (lower) case.
                    for (name, value) in data where name.hasSuffix("_id") {
                        #expect((value as? String).map { $0 == $0.lowercased() } ?? true, "\(name) of \(event["type"] ?? "")")
                    }
                    #expect(event["redacted"] as? Bool == false)
                }
                let registered = seen.filter { $0["type"] as? String == "account.registered" }
                #expect(registered.count == 2)
                #expect((registered.first?["data"] as? [String: Any])?["email"] as? String == "ana@example.com")
                #expect(registered.first?["account_id"] as? String == registered.first?["stream_id"] as? String)

                // A type filter keeps only those types, still in commit order.
                let (filtered, _) = try await followFeed(client, key: reader, limit: 100, types: "account.registered,email.verified")
                #expect(filtered.compactMap { $0["event_id"] as? String } == registered.compactMap { $0["event_id"] as? String })

                // Bad input and keys.
                func status(_ uri: String, key: String? = reader) async throws -> Answer {
                    try await call(client, .get, uri, token: key, path: "/events")
                }
                let badCursor = try await status("/events?after=not-a-cursor")
                #expect(badCursor.status == .badRequest && badCursor.string("error") == "invalid_cursor")
                for query in ["limit=0", "limit=ten", "types=Account%20Registered", "wait=-1", "wait=soon"] {
                    let answer = try await status("/events?\(query)")
                    #expect(answer.status == .badRequest && answer.string("error") == "invalid_request", "\(query)")
                }
                #expect(try await status("/events", key: nil).status == .unauthorized)
                let wrong = try await status("/events", key: "lk_wrong")
                #expect(wrong.status == .unauthorized && wrong.string("error") == "invalid_api_key")
                let scope = try await status("/events", key: holds)
                #expect(scope.status == .forbidden && scope.string("error") == "insufficient_scope")
            }
        }
    }

    @Test("a page of several slices holds the same events as small pages, and a failing later slice ends it early")
    func slicedPages() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            // 2,500 encrypted events on five streams: more than two slices.
            for _ in 0..<5 {
                let stream = UUID()
                _ = try await services.eventStore.append(
                    to: stream, streamType: "test", subjectID: stream, expected: .noStream,
                    events: (0..<500).map { NewEvent(type: "test.sliced", payload: Array(#"{"n":\#($0)}"#.utf8)) })
            }
            try await services.eventStore.waitForFeed(count: 2500)
            let commitOrder = try await db.client.query("SELECT event_id FROM events ORDER BY tx_id, global_position")
                .rows.map { try #require(try $0.uuid(0)).lowercased }
            try await Application(router: buildRouter(services)).test(.router) { client in
                func page(limit: Int, after: String? = nil) async throws -> (ids: [String], cursor: String?, status: HTTPResponse.Status) {
                    let answer = try await call(
                        client, .get, "/events?limit=\(limit)" + (after.map { "&after=\($0)" } ?? ""), token: reader, path: "/events")
                    let events = answer.body["events"] as? [[String: Any]] ?? []
                    if let last = events.last { #expect(answer.string("next_cursor") == last["cursor"] as? String) }
                    return (events.compactMap { $0["event_id"] as? String }, answer.string("next_cursor"), answer.status)
                }
                let first = try await page(limit: 2200)
                #expect(first.ids == Array(commitOrder.prefix(2200)))
                let rest = try await page(limit: 10_000, after: first.cursor)
                #expect(rest.ids == Array(commitOrder.dropFirst(2200)))
                let (small, _) = try await followFeed(client, key: reader, limit: 700)
                #expect(small.compactMap { $0["event_id"] as? String } == commitOrder)

                // Alter the payload of the 1,501st event: the second slice fails to open it.
                try await db.client.query(
                    "UPDATE events SET payload = set_byte(payload, 20, get_byte(payload, 20) # 1) WHERE event_id = $1",
                    [.uuid(try #require(UUID(uuidString: commitOrder[1500])))])
                let shortened = try await page(limit: 3000)
                #expect(shortened.status == .ok)
                #expect(shortened.ids == Array(commitOrder.prefix(1000)))
                let failing = try await page(limit: 3000, after: shortened.cursor)
                #expect(failing.status == .internalServerError)
            }
        }
    }

    @Test("an empty page with wait returns as soon as an event is committed")
    func longPoll() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                let (_, end) = try await followFeed(client, key: reader)
                let waiting = Task {
                    try await call(client, .get, "/events?wait=30&after=\(try #require(end))", token: reader, path: "/events")
                }
                try await Task.sleep(for: .milliseconds(200))
                _ = try await signUp(client, email: "ana@example.com")
                let answer = try await waiting.value
                let events = try #require(answer.body["events"] as? [[String: Any]])
                #expect(events.first?["type"] as? String == "account.registered")

                // Nothing new: the wait ends empty with the same cursor.
                let (_, last) = try await followFeed(client, key: reader)
                let idle = try await call(client, .get, "/events?wait=0.3&after=\(try #require(last))", token: reader, path: "/events")
                #expect((idle.body["events"] as? [Any])?.isEmpty == true && idle.string("next_cursor") == last)
            }
        }
    }

    @Test("a purged account's events stay in the feed with data null and redacted true")
    func redactedAfterShredding() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead, .auditRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let shredded = try await db.client.withConnection { connection in
                    try await services.eventStore.keyring.destroy(
                        subjectID: try #require(UUID(uuidString: accountID)), at: db.clock.now(), on: connection)
                }
                #expect(shredded)
                let history = try await call(client, .get, "/accounts/\(accountID)/events", token: reader, path: "/accounts/{id}/events")
                let events = try #require(history.body["events"] as? [[String: Any]])
                #expect(!events.isEmpty)
                for event in events {
                    #expect(event["redacted"] as? Bool == true && event["data"] is NSNull && event["type"] is String)
                }
            }
        }
    }

    @Test(
        "Accept: application/cloudevents-batch+json gives the feed as CloudEvents; ledgercursor resumes; other Accepts keep the plain form")
    func cloudEventsFeed() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                _ = try await signUp(client, email: "bob@example.com")
                let stored = Int(try #require(try await db.client.query("SELECT count(*) FROM events")[0].int(0)))
                try await services.eventStore.waitForFeed(count: stored)
                let (plain, _) = try await followFeed(client, key: reader)

                /// A page with `accept`: its content type and parsed body.
                func page(_ accept: String?, after: String? = nil, limit: Int = 1000) async throws -> (type: String?, body: Any) {
                    var headers = bearer(reader)
                    if let accept { headers[.accept] = accept }
                    let uri = "/events?limit=\(limit)" + (after.map { "&after=\($0)" } ?? "")
                    return try await client.execute(uri: uri, method: .get, headers: headers) { response in
                        #expect(response.status == .ok)
                        expectConforms(response, "get", "/events")
                        return (response.headers[.contentType], try JSONSerialization.jsonObject(with: Data(buffer: response.body)))
                    }
                }
                let batch = try await page("application/cloudevents-batch+json")
                #expect(batch.type == "application/cloudevents-batch+json")
                let events = try #require(batch.body as? [[String: Any]])
                #expect(events.count == plain.count)
                for (cloudEvent, event) in zip(events, plain) {
                    #expect(cloudEvent["specversion"] as? String == "1.0" && cloudEvent["source"] as? String == "urn:321fit:account-ledger")
                    #expect(cloudEvent["id"] as? String == event["event_id"] as? String)
                    #expect(cloudEvent["type"] as? String == "fit321.ledger." + (event["type"] as? String ?? ""))
                    #expect(cloudEvent["subject"] as? String == event["account_id"] as? String)
                    #expect(cloudEvent["time"] as? String == event["recorded_at"] as? String)
                    #expect(cloudEvent["datacontenttype"] as? String == "application/json")
                    #expect(cloudEvent["ledgercursor"] as? String == event["cursor"] as? String)
                    #expect(cloudEvent["ledgerversion"] as? Int == event["version"] as? Int)
                    #expect(cloudEvent["ledgerschemaversion"] as? Int == event["schema_version"] as? Int)
                    #expect(
                        (try? JSONSerialization.data(withJSONObject: cloudEvent["data"] ?? NSNull(), options: .sortedKeys))
                            == (try? JSONSerialization.data(withJSONObject: event["data"] ?? NSNull(), options: .sortedKeys)))
                }
                // A consumer resumes from a CloudEvent alone: after the second, the rest, in order.
                let resumed = try #require(
                    try await page("application/cloudevents-batch+json", after: events[1]["ledgercursor"] as? String).body
                        as? [[String: Any]])
                #expect(resumed.compactMap { $0["id"] as? String } == events.dropFirst(2).compactMap { $0["id"] as? String })
                // Content negotiation as HTTP has it: no, unknown, wildcard or outranked CloudEvents keeps the plain form,
                // and so does a tie (a generated client lists both forms at q=1, in either order).
                for accept in [
                    nil, "text/csv", "*/*", "application/json, application/cloudevents-batch+json;q=0.5",
                    "application/cloudevents-batch+json;q=0", "application/json, application/cloudevents-batch+json",
                    "application/cloudevents-batch+json, application/json",
                    "application/cloudevents-batch+json;q=0.5, application/json;q=0.5",
                ] {
                    let answer = try await page(accept)
                    #expect(
                        answer.type == "application/json; charset=utf-8" && (answer.body as? [String: Any])?["events"] != nil,
                        "\(accept ?? "none")")
                }
                #expect(
                    try await page("application/cloudevents-batch+json;q=0.9, application/json;q=0.5").type
                        == "application/cloudevents-batch+json")

                // Redacted stays redacted: a purged account's CloudEvents carry data null.
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                _ = try await db.client.withConnection { connection in
                    try await services.eventStore.keyring.destroy(
                        subjectID: try #require(UUID(uuidString: accountID)), at: db.clock.now(), on: connection)
                }
                let after = try #require(try await page("application/cloudevents-batch+json").body as? [[String: Any]])
                let anas = after.filter { $0["subject"] as? String == accountID }
                #expect(!anas.isEmpty && anas.allSatisfy { $0["data"] is NSNull })
                #expect(after.filter { $0["subject"] as? String != accountID }.allSatisfy { $0["data"] is [String: Any] })
            }
        }
    }

    @Test("a key past its rate answers 429 rate_limited with retry_after")
    func rateLimit() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock) { $0.apiKeyRateLimit = 1 }
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            let second = try await services.apiKeys.create(name: "second", scopes: [.eventsRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                // Calls until the bucket (a burst of 2, then 1/s) runs dry; a busy machine only makes it take longer.
                var first: HTTPResponse.Status?
                var limited: Answer?
                for _ in 0..<200 where limited == nil {
                    let answer = try await call(client, .get, "/events", token: reader)
                    first = first ?? answer.status
                    if answer.status == .tooManyRequests { limited = answer }
                }
                #expect(first == .ok)
                let answer = try #require(limited)
                #expect(answer.string("error") == "rate_limited")
                #expect((answer.body["retry_after"] as? Int ?? 0) >= 1 && answer.headers[.retryAfter] != nil)
                // Each key has its own budget.
                #expect(try await call(client, .get, "/events", token: second).status == .ok)
            }
        }
    }
}

@Suite("API key rate limit")
struct TokenBucketTests {
    @Test("a burst of twice the rate, then one call per 1/rate seconds; keys are counted apart")
    func bucket() {
        let limiter = TokenBucketLimiter(rate: 2, burst: 4)
        let start = ContinuousClock.now
        let key: [UInt8] = [1]
        for _ in 0..<4 { #expect(limiter.take(key, now: start) == nil) }
        let wait = limiter.take(key, now: start)
        #expect(wait == 0.5)
        #expect(limiter.take([2], now: start) == nil)
        #expect(limiter.take(key, now: start + .milliseconds(499)) != nil)
        // One second refills two tokens (a refused call takes none).
        #expect(limiter.take(key, now: start + .milliseconds(1000)) == nil)
        #expect(limiter.take(key, now: start + .milliseconds(1000)) == nil)
        #expect(limiter.take(key, now: start + .milliseconds(1000)) != nil)
        #expect(limiter.take(key, now: start + .seconds(60)) == nil)
    }
}
