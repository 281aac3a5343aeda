import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: the feed under concurrent writers, and SSE", .timeLimit(.minutes(10)))
struct EventsConsistencyTests {
    @Test("two instances, 8 writers, 4 consumers: every event once, one order everywhere, streams in version order")
    func twoInstances() async throws {
        try await TestPostgres.withDatabase(maximumConnections: 24) { db in
            // Two service instances on one database, each with its own pool and event store.
            let secondClient = PostgresClient(configuration: .init(url: db.url, maximumConnections: 12))
            // Every writer signs up from 127.0.0.1: no rate is under test here.
            let unlimited: (inout LedgerConfiguration) -> Void = {
                $0.apiKeyRateLimit = 0
                $0.policies.ipSignupLimit = 1000
                $0.policies.ipLookupLimit = 1000
                $0.policies.otp.addressLimit = 1000
                $0.policies.otp.resendLimit = 1000
                $0.policies.otp.resendInterval = 0
                $0.policies.otp.dailyFailureLimit = 1000
            }
            let first = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey, configure: unlimited)
            let second = try makeServices(url: db.url, client: secondClient, clock: db.clock, masterKey: db.masterKey, configure: unlimited)
            let key = try await first.apiKeys.create(name: "consumer", scopes: [.eventsRead]).key
            let writersDone = ManagedFlag()
            try await Application(router: buildRouter(first)).test(.router) { a in
                try await Application(router: buildRouter(second)).test(.router) { b in
                    let instances: [any TestClientProtocol] = [a, b]
                    let consumers = (0..<4).map { index in
                        Task { () throws -> [SeenEvent] in
                            var seen: [SeenEvent] = []
                            var cursor = FeedCursor.start.token
                            while true {
                                let client = instances[index % 2]
                                let page = try await call(
                                    client, .get, "/events?limit=7&wait=1&after=\(cursor)", token: key, path: "/events")
                                let events = page.body["events"] as? [[String: Any]] ?? []
                                seen += events.map {
                                    SeenEvent(
                                        id: $0["event_id"] as? String ?? "", stream: $0["stream_id"] as? String ?? "",
                                        version: $0["version"] as? Int ?? 0)
                                }
                                cursor = page.string("next_cursor") ?? cursor
                                if events.isEmpty, writersDone.isSet {
                                    let total = try await db.client.query("SELECT count(*) FROM events")[0].int(0) ?? 0
                                    if seen.count >= total { return seen }
                                }
                            }
                        }
                    }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for writer in 0..<8 {
                            group.addTask {
                                let client = instances[writer % 2]
                                for round in 0..<4 {
                                    let access = try await signUp(client, email: "w\(writer)r\(round)@example.com")
                                    _ = try await call(client, .patch, "/me/profile", ["display_name": "Writer \(writer)"], token: access)
                                    // Codes for two shared numbers: each request supersedes the open
                                    // one (written by another writer's wrong code meanwhile).
                                    let requestID = try await requestOTP(client, "+99551120030\(writer % 2)")
                                    _ = try await call(
                                        client, .post, "/auth/phone/verify-otp", ["request_id": requestID, "code": "000000"])
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                    writersDone.set()
                    var orders: [[String]] = []
                    for consumer in consumers {
                        let seen = try await consumer.value
                        let ids = seen.map(\.id)
                        #expect(Set(ids).count == ids.count, "a consumer saw an event twice")
                        var versions: [String: Int] = [:]
                        for event in seen {
                            #expect(event.version == (versions[event.stream] ?? 0) + 1, "stream \(event.stream) out of version order")
                            versions[event.stream] = event.version
                        }
                        orders.append(ids)
                    }
                    let stored = try await db.client.query("SELECT event_id FROM events ORDER BY tx_id, global_position")
                    let expected = try stored.rows.map { try #require(try $0.uuid(0)).lowercased }
                    #expect(expected.count >= 8 * 4 * 2)
                    for order in orders { #expect(order == expected) }
                }
            }
            await secondClient.shutdown()
        }
    }

    @Test("SSE: events arrive with their cursor as id, and a reconnect with Last-Event-ID resumes after it")
    func serverSentEvents() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let key = try await services.apiKeys.create(name: "consumer", scopes: [.eventsRead]).key
            let app = Application(router: buildRouter(services), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await withHTTPClient { http in
                try await app.test(.live) { client in
                    let port = try #require(client.port)
                    // Straight through the service: the live test client gives up after 20 s, which a
                    // loaded machine's sign-ups can take; what is under test is the stream.
                    for index in 0..<3 {
                        _ = try await services.accounts.signUp(
                            email: "sse\(index)@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
                    }
                    let total = Int(try await db.client.query("SELECT count(*) FROM events")[0].int(0) ?? 0)
                    try await services.eventStore.waitForFeed(count: total)

                    /// Reads SSE messages until `count` have arrived, then drops the connection.
                    func read(_ count: Int, lastEventID: String?) async throws -> [(id: String, type: String, data: [String: Any])] {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/events/stream")
                        request.headers.add(name: "Authorization", value: "Bearer \(key)")
                        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
                        let response = try await http.execute(request, timeout: .seconds(30))
                        #expect(response.status == .ok)
                        #expect(response.headers["Content-Type"].first == "text/event-stream")
                        var messages: [(id: String, type: String, data: [String: Any])] = []
                        var text = ""
                        for try await buffer in response.body {
                            text += String(buffer: buffer)
                            while let end = text.range(of: "\n\n") {
                                let block = String(text[..<end.lowerBound])
                                text = String(text[end.upperBound...])
                                var fields: [String: String] = [:]
                                for line in block.split(separator: "\n") where !line.hasPrefix(":") {
                                    if let colon = line.firstIndex(of: ":") {
                                        fields[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingCharacters(
                                            in: .whitespaces)
                                    }
                                }
                                guard let id = fields["id"], let type = fields["event"], let data = fields["data"] else { continue }
                                let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] ?? [:]
                                messages.append((id, type, object))
                            }
                            if messages.count >= count { break }
                        }
                        // One read may bring several messages: keep the first `count`, as a client
                        // that stopped after them would have, and resume after the last of those.
                        return Array(messages.prefix(count))
                    }

                    let firstPart = try await read(4, lastEventID: nil)
                    #expect(firstPart.count == 4)
                    for message in firstPart {
                        #expect(message.data["cursor"] as? String == message.id && message.data["type"] as? String == message.type)
                    }
                    // Reconnect after the fourth: the rest, including an event committed while away.
                    _ = try await signUp(client, email: "sse-late@example.com")
                    let newTotal = Int(try await db.client.query("SELECT count(*) FROM events")[0].int(0) ?? 0)
                    let rest = try await read(newTotal - 4, lastEventID: firstPart.last?.id)
                    let all = (firstPart + rest).compactMap { $0.data["event_id"] as? String }
                    let stored = try await db.client.query("SELECT event_id FROM events ORDER BY tx_id, global_position")
                    #expect(all == (try stored.rows.map { try #require(try $0.uuid(0)).lowercased }))

                    // A bad cursor is refused before the stream starts.
                    var bad = HTTPClientRequest(url: "http://127.0.0.1:\(port)/events/stream?after=garbage")
                    bad.headers.add(name: "Authorization", value: "Bearer \(key)")
                    #expect(try await http.execute(bad, timeout: .seconds(10)).status == .badRequest)
                }
            }
        }
    }

    @Test("SSE: a key holds at most LEDGER_SSE_STREAMS_PER_KEY open streams (then 429), and a revoked key's streams end")
    func streamBounds() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey) {
                $0.streamsPerKey = 2
                $0.streamKeyRecheckInterval = .milliseconds(300)
            }
            let consumer = try await services.apiKeys.create(name: "consumer", scopes: [.eventsRead])
            let other = try await services.apiKeys.create(name: "other", scopes: [.eventsRead]).key
            let app = Application(router: buildRouter(services), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await withHTTPClient { http in
                try await app.test(.live) { client in
                    let port = try #require(client.port)
                    func open(_ key: String) async throws -> HTTPClientResponse {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/events/stream")
                        request.headers.add(name: "Authorization", value: "Bearer \(key)")
                        return try await http.execute(request, timeout: .seconds(60))
                    }
                    let first = try await open(consumer.key)
                    let second = try await open(consumer.key)
                    #expect(first.status == .ok && second.status == .ok)
                    let third = try await open(consumer.key)
                    #expect(third.status == .tooManyRequests && third.headers["Retry-After"].first == "30")
                    _ = try await third.body.collect(upTo: 1 << 16)
                    // Another key is not affected.
                    let others = try await open(other)
                    #expect(others.status == .ok)
                    // Revoked, the key's streams end by themselves (within the recheck and the key
                    // cache's lifetime); the other key's stays open.
                    _ = try await services.apiKeys.revoke(consumer.id)
                    for response in [first, second] {
                        var bytes = 0
                        for try await buffer in response.body { bytes += buffer.readableBytes }
                        #expect(bytes > 0)
                    }
                    // A slot is free again once a stream ends; the revoked key gets 401, not 429.
                    #expect(try await open(consumer.key).status == .unauthorized)
                }
            }
        }
    }
}

/// What a consumer keeps of each event it read.
struct SeenEvent: Sendable {
    let id: String
    let stream: String
    let version: Int
}

/// A flag set once, read from many tasks.
final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
