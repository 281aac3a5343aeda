import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerTestSupport
import LedgerWorkers
import NIOCore
import Testing

/// A webhook receiver on loopback: keeps every push it accepts, and answers 503 while told to fail.
final class EventReceiver: @unchecked Sendable {
    private let lock = NSLock()
    private var pushes: [(signature: String, body: [UInt8])] = []
    private var headers: [HTTPFields] = []
    private var failing = 0
    private var attempts = 0
    private var attemptIDs: [String] = []

    /// The next `count` pushes fail (`Int.max`: every push).
    func fail(_ count: Int) { lock.withLock { failing = count } }
    var accepted: [(signature: String, body: [UInt8])] { lock.withLock { pushes } }
    /// The headers of each accepted push.
    var acceptedHeaders: [HTTPFields] { lock.withLock { headers } }
    var attemptCount: Int { lock.withLock { attempts } }
    /// The `webhook-id` of every attempt, failed ones too.
    var webhookIDs: [String] { lock.withLock { attemptIDs } }

    /// Event ids of every accepted push, in arrival order.
    var eventIDs: [String] {
        accepted.flatMap { push -> [String] in
            let object = (try? JSONSerialization.jsonObject(with: Data(push.body))) as? [String: Any]
            return (object?["events"] as? [[String: Any]] ?? []).compactMap { $0["event_id"] as? String }
        }
    }

    func receive(_ fields: HTTPFields, body: [UInt8]) -> HTTPResponse.Status {
        lock.withLock {
            attempts += 1
            attemptIDs.append(fields[HTTPField.Name("webhook-id")!] ?? "")
            if failing > 0 {
                if failing != .max { failing -= 1 }
                return .serviceUnavailable
            }
            pushes.append((fields[HTTPField.Name("X-Ledger-Signature")!] ?? "", body))
            headers.append(fields)
            return .noContent
        }
    }

    /// Runs `body` with the receiver listening; the client it is given is closed before the server stops.
    func serve(_ body: (_ url: String, _ client: HTTPClient) async throws -> Void) async throws {
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let bytes = try await request.body.collect(upTo: 4 << 20)
            return self.receive(request.headers, body: Array(buffer: bytes))
        }
        // A receiver that points pushes elsewhere: `/moved` answers 302 to `/hook`.
        router.post("/moved") { _, _ -> Response in
            Response(status: .found, headers: [.location: "/hook"])
        }
        try await withLoopbackServer(router, label: "event-receiver") { port in
            // The client closes before the receiver stops, so no connection is cut mid-stream.
            try await withHTTPClient { client in try await body("http://127.0.0.1:\(port)/hook", client) }
        }
    }
}

@Suite("Webhook subscriptions", .timeLimit(.minutes(10)))
struct EventWebhookDispatcherTests {
    /// Standard Webhooks' own example secret (24 bytes).
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    /// Signs up `count` accounts and waits until the feed shows all their events.
    func writeEvents(_ db: TestDatabase, store: EventStore, accounts count: Int, prefix: String) async throws {
        let service = try accountService(db)
        for index in 0..<count {
            _ = try await service.signUp(
                email: "\(prefix)\(index)@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
        }
        let total = Int(try await db.client.query("SELECT count(*) FROM events")[0].int(0) ?? 0)
        try await store.waitForFeed(count: total)
    }

    func commitOrder(_ db: TestDatabase) async throws -> [String] {
        try await db.client.query("SELECT event_id FROM events ORDER BY tx_id, global_position").rows.map {
            try #require(try $0.uuid(0)).lowercased
        }
    }

    @Test("pushes in commit order, signed; retries with doubling backoff; pauses after sustained failure; resumes")
    func orderRetryPause() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let subscriptions = try WebhookSubscriptions(
                store: store, masterKey: db.masterKey, clock: db.clock, allowsPrivateNetworks: true)
            var policy = WebhookSubscription.Policy()
            policy.pauseAfterFailures = 3
            policy.batchSize = 4
            let receiver = EventReceiver()
            try await receiver.serve { url, client in
                let dispatcher = EventWebhookDispatcher(
                    subscriptions: subscriptions, store: store, httpClient: client, policy: policy, clock: db.clock)
                let subscription = try await subscriptions.create(url: url, types: nil, secret: Self.secret, after: .start).subscription
                try await writeEvents(db, store: store, accounts: 3, prefix: "hook")

                // Two failures: 1 s, then 2 s of backoff; nothing is sent before the time comes.
                receiver.fail(2)
                #expect(try await dispatcher.runOnce() == 0)
                var state = try #require(try await subscriptions.get(subscription.id))
                #expect(state.consecutiveFailures == 1 && state.lastError == "the endpoint answered 503")
                #expect(state.nextAttemptAt == db.clock.now().addingTimeInterval(1))
                #expect(try await dispatcher.runOnce() == 0 && receiver.attemptCount == 1)
                db.clock.advance(by: 1)
                #expect(try await dispatcher.runOnce() == 0)
                state = try #require(try await subscriptions.get(subscription.id))
                #expect(state.consecutiveFailures == 2 && state.nextAttemptAt == db.clock.now().addingTimeInterval(2))
                db.clock.advance(by: 2)
                let expected = try await commitOrder(db)
                #expect(try await dispatcher.runOnce() == expected.count)
                #expect(receiver.eventIDs == expected)
                state = try #require(try await subscriptions.get(subscription.id))
                #expect(state.consecutiveFailures == 0 && state.deliveredEvents == Int64(expected.count))
                #expect(try await subscriptions.lag(state) == 0)
                for push in receiver.accepted {
                    #expect(WebhookSignature.isValid(push.signature, secret: Self.secret, body: push.body))
                    #expect(!WebhookSignature.isValid(push.signature, secret: "another-secret-value", body: push.body))
                    #expect(!WebhookSignature.isValid(push.signature, secret: Self.secret, body: push.body + [UInt8(ascii: " ")]))
                    // When it was sent, under the signature.
                    let object = (try? JSONSerialization.jsonObject(with: Data(push.body))) as? [String: Any]
                    #expect((object?["sent_at"] as? String).flatMap(RFC3339.parse) != nil)
                }

                // Sustained failure pauses it; paused, nothing is sent however long we wait.
                receiver.fail(.max)
                try await writeEvents(db, store: store, accounts: 1, prefix: "later")
                for _ in 0..<3 {
                    _ = try await dispatcher.runOnce()
                    db.clock.advance(by: 3600)
                }
                state = try #require(try await subscriptions.get(subscription.id))
                #expect(state.status == .paused && state.pausedReason == "failing" && state.consecutiveFailures == 3)
                let attempts = receiver.attemptCount
                #expect(try await dispatcher.runOnce() == 0 && receiver.attemptCount == attempts)
                #expect(try await subscriptions.lag(state) > 0)

                // Resumed, it delivers what was missed, exactly once.
                receiver.fail(0)
                #expect(try await subscriptions.setStatus(subscription.id, .active)?.status == .active)
                _ = try await dispatcher.runOnce()
                let all = try await commitOrder(db)
                #expect(receiver.eventIDs == all)
            }
        }
    }

    @Test("two dispatchers on one subscription never send an event twice; a type filter keeps only its types")
    func leasesAndTypes() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let subscriptions = try WebhookSubscriptions(
                store: store, masterKey: db.masterKey, clock: db.clock, allowsPrivateNetworks: true)
            let everything = EventReceiver()
            let registrations = EventReceiver()
            try await everything.serve { allURL, allClient in
                try await registrations.serve { typedURL, typedClient in
                    _ = try await subscriptions.create(url: allURL, types: nil, secret: Self.secret, after: .start)
                    _ = try await subscriptions.create(url: typedURL, types: ["account.registered"], secret: Self.secret, after: .start)
                    try await writeEvents(db, store: store, accounts: 6, prefix: "lease")
                    let first = EventWebhookDispatcher(subscriptions: subscriptions, store: store, httpClient: allClient, clock: db.clock)
                    let second = EventWebhookDispatcher(
                        subscriptions: subscriptions, store: store, httpClient: typedClient, clock: db.clock)
                    async let a = first.runOnce()
                    async let b = second.runOnce()
                    _ = try await (a, b)
                    _ = try await first.runOnce()
                    let expected = try await commitOrder(db)
                    #expect(everything.eventIDs == expected)
                    let registered = try await db.client.query(
                        "SELECT event_id FROM events WHERE event_type = 'account.registered' ORDER BY tx_id, global_position")
                    #expect(registrations.eventIDs == (try registered.rows.map { try #require(try $0.uuid(0)).lowercased }))
                }
            }
        }
    }

    @Test("a subscription's rules are all reported at once")
    func validation() async throws {
        try await TestPostgres.withDatabase { db in
            let subscriptions = try WebhookSubscriptions(store: db.eventStore(), masterKey: db.masterKey, clock: db.clock)
            await #expect(throws: AccountService.ValidationFailure.self) {
                _ = try await subscriptions.create(url: "ftp://x", types: ["Not A Type"], secret: "short", after: nil)
            }
            do {
                _ = try await subscriptions.create(url: "/relative", types: [], secret: "short", after: nil)
            } catch let failure as AccountService.ValidationFailure {
                #expect(failure.problems.map(\.code) == ["invalid_url", "invalid_types", "invalid_secret"])
            }
            // Secrets have the Standard Webhooks form: whsec_ and the base64 of 24 to 64 bytes.
            for secret in [
                "a-long-enough-plain-secret", "whsec_" + Data(repeating: 7, count: 16).base64EncodedString(),
                "whsec_" + Data(repeating: 7, count: 65).base64EncodedString(), "whsec_not base64 at all!!!!!!!!!!!!", "whsec_",
            ] {
                await #expect(throws: AccountService.ValidationFailure.self, "\(secret)") {
                    _ = try await subscriptions.create(url: "https://hooks.example.net/h", types: nil, secret: secret, after: nil)
                }
            }
            do {
                _ = try await subscriptions.create(url: "https://hooks.example.net/h", types: nil, secret: nil, format: "xml", after: nil)
            } catch let failure as AccountService.ValidationFailure {
                #expect(failure.problems.map(\.code) == ["invalid_format"])
            }
            #expect(try await subscriptions.list().isEmpty)
        }
    }

    @Test("no push follows a redirect, and none reaches a private address unless private networks are allowed")
    func outboundSafety() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let allowing = try WebhookSubscriptions(store: store, masterKey: db.masterKey, clock: db.clock, allowsPrivateNetworks: true)
            let receiver = EventReceiver()
            try await receiver.serve { url, _ in
                // The service's own client (`HTTPClient.outbound`), which a redirect does not move.
                let dispatcher = EventWebhookDispatcher(subscriptions: allowing, store: store, clock: db.clock)
                let moved = try await allowing.create(
                    url: url.replacingOccurrences(of: "/hook", with: "/moved"), types: nil, secret: Self.secret, after: .start
                ).subscription
                try await writeEvents(db, store: store, accounts: 1, prefix: "moved")
                #expect(try await dispatcher.runOnce() == 0)
                #expect(try await allowing.get(moved.id)?.lastError == "the endpoint answered 302")
                #expect(receiver.attemptCount == 0)
                _ = try await allowing.delete(moved.id)

                // Made while private networks were allowed, refused once they are not: the address is
                // checked again before every push.
                let stored = try await allowing.create(url: url, types: nil, secret: Self.secret, after: .start).subscription
                let strict = try WebhookSubscriptions(store: store, masterKey: db.masterKey, clock: db.clock)
                #expect(try await EventWebhookDispatcher(subscriptions: strict, store: store, clock: db.clock).runOnce() == 0)
                #expect(try await strict.get(stored.id)?.lastError?.hasPrefix("refused: ") == true)
                #expect(receiver.attemptCount == 0)
            }
        }
    }

    /// A store, subscriptions that may reach loopback, and a receiver listening: where the
    /// signing tests start.
    func withReceiver(
        _ db: TestDatabase,
        _ body: (EventStore, WebhookSubscriptions, EventReceiver, _ url: String, HTTPClient) async throws -> Void
    ) async throws {
        let store = db.eventStore()
        let subscriptions = try WebhookSubscriptions(store: store, masterKey: db.masterKey, clock: db.clock, allowsPrivateNetworks: true)
        let receiver = EventReceiver()
        try await receiver.serve { url, client in try await body(store, subscriptions, receiver, url, client) }
    }

    /// Whether `header` (a `webhook-signature`) holds a `v1` signature of `id.timestamp.body`
    /// under `secret`, computed here as Standard Webhooks' specification says.
    static func standardSignatureValid(_ header: String, id: String, timestamp: String, body: [UInt8], secret: String) -> Bool {
        let key: [UInt8] =
            secret.hasPrefix("whsec_") ? Array(Data(base64Encoded: String(secret.dropFirst(6))) ?? Data()) : Array(secret.utf8)
        let expected = Data(HMACSHA256.authenticate(key: key, message: Array("\(id).\(timestamp).".utf8) + body)).base64EncodedString()
        return header.split(separator: " ").contains { $0 == "v1,\(expected)" }
    }

    @Test(
        "Standard Webhooks: webhook-id the same on a retry and new per batch; signed under every live secret; legacy secrets keep signing")
    func standardWebhooks() async throws {
        try await TestPostgres.withDatabase { db in
            try await withReceiver(db) { store, subscriptions, receiver, url, client in
                let dispatcher = EventWebhookDispatcher(subscriptions: subscriptions, store: store, httpClient: client, clock: db.clock)
                let (subscription, generated) = try await subscriptions.create(url: url, types: nil, secret: nil, after: .start)
                let first = try #require(generated?.text)
                #expect(first.hasPrefix("whsec_") && Data(base64Encoded: String(first.dropFirst(6)))?.count == 32)
                try await writeEvents(db, store: store, accounts: 1, prefix: "standard")
                let firstBatch = try await commitOrder(db)

                // A failed batch is retried as it was, with its webhook-id, though more events came
                // meanwhile; they follow in a batch of their own, with its own id.
                receiver.fail(1)
                _ = try await dispatcher.runOnce()
                try await writeEvents(db, store: store, accounts: 1, prefix: "meanwhile")
                db.clock.advance(by: 1)
                _ = try await dispatcher.runOnce()
                let ids = receiver.webhookIDs
                #expect(ids.count == 3 && ids[0] == ids[1] && ids[1] != ids[2])
                let everything = try await commitOrder(db)
                #expect(receiver.accepted.count == 2 && receiver.eventIDs == everything)
                let retried = (try? JSONSerialization.jsonObject(with: Data(receiver.accepted[0].body))) as? [String: Any]
                #expect((retried?["events"] as? [[String: Any]])?.compactMap { $0["event_id"] as? String } == firstBatch)
                for (push, headers) in zip(receiver.accepted, receiver.acceptedHeaders) {
                    let id = try #require(headers[HTTPField.Name("webhook-id")!])
                    let timestamp = try #require(headers[HTTPField.Name("webhook-timestamp")!])
                    let signature = try #require(headers[HTTPField.Name("webhook-signature")!])
                    #expect(Int64(timestamp) == Int64(db.clock.now().timeIntervalSince1970))
                    #expect(Self.standardSignatureValid(signature, id: id, timestamp: timestamp, body: push.body, secret: first))
                    #expect(!Self.standardSignatureValid(signature, id: id, timestamp: timestamp, body: push.body + [32], secret: first))
                    #expect(WebhookSignature.isValid(push.signature, secret: first, body: push.body))
                }

                // Rotated: both secrets sign for 24 hours, then only the new one.
                let rotated = try #require(try await subscriptions.rotateSecret(subscription.id)).text
                #expect(rotated != first && WebhookSecret(rotated) != nil)
                try await writeEvents(db, store: store, accounts: 1, prefix: "rotated")
                _ = try await dispatcher.runOnce()
                var headers = try #require(receiver.acceptedHeaders.last)
                var push = try #require(receiver.accepted.last)
                var signature = try #require(headers[HTTPField.Name("webhook-signature")!])
                var (id, timestamp) = (headers[HTTPField.Name("webhook-id")!] ?? "", headers[HTTPField.Name("webhook-timestamp")!] ?? "")
                #expect(signature.split(separator: " ").count == 2)
                #expect(Self.standardSignatureValid(signature, id: id, timestamp: timestamp, body: push.body, secret: first))
                #expect(Self.standardSignatureValid(signature, id: id, timestamp: timestamp, body: push.body, secret: rotated))
                #expect(WebhookSignature.isValid(push.signature, secret: rotated, body: push.body))
                db.clock.advance(by: WebhookSubscriptions.rotationOverlap)
                try await writeEvents(db, store: store, accounts: 1, prefix: "overlap-over")
                _ = try await dispatcher.runOnce()
                headers = try #require(receiver.acceptedHeaders.last)
                push = try #require(receiver.accepted.last)
                signature = try #require(headers[HTTPField.Name("webhook-signature")!])
                (id, timestamp) = (headers[HTTPField.Name("webhook-id")!] ?? "", headers[HTTPField.Name("webhook-timestamp")!] ?? "")
                #expect(signature.split(separator: " ").count == 1)
                #expect(!Self.standardSignatureValid(signature, id: id, timestamp: timestamp, body: push.body, secret: first))
                #expect(Self.standardSignatureValid(signature, id: id, timestamp: timestamp, body: push.body, secret: rotated))
                #expect(try await subscriptions.rotateSecret(UUID()) == nil)

                // Two rotations within a day: each replaced secret signs until its own 24 hours end.
                let second = try #require(try await subscriptions.rotateSecret(subscription.id)).text
                db.clock.advance(by: 3600)
                let third = try #require(try await subscriptions.rotateSecret(subscription.id)).text
                func signers(_ prefix: String) async throws -> [String] {
                    try await writeEvents(db, store: store, accounts: 1, prefix: prefix)
                    _ = try await dispatcher.runOnce()
                    let headers = try #require(receiver.acceptedHeaders.last)
                    let push = try #require(receiver.accepted.last)
                    let signature = try #require(headers[HTTPField.Name("webhook-signature")!])
                    let (id, timestamp) = (
                        headers[HTTPField.Name("webhook-id")!] ?? "", headers[HTTPField.Name("webhook-timestamp")!] ?? ""
                    )
                    return [("rotated", rotated), ("second", second), ("third", third)].filter {
                        Self.standardSignatureValid(signature, id: id, timestamp: timestamp, body: push.body, secret: $0.1)
                    }.map(\.0)
                }
                #expect(try await signers("twice") == ["rotated", "second", "third"])
                // The first overlap ends 24 hours after the first of the two; the second's an hour later.
                db.clock.advance(by: WebhookSubscriptions.rotationOverlap - 3600)
                #expect(try await signers("first-over") == ["second", "third"])
                db.clock.advance(by: 3600)
                #expect(try await signers("both-over") == ["third"])
            }
        }
    }

    @Test("a subscription made before Standard Webhooks keeps signing with its secret as given; CloudEvents subscriptions push batches")
    func legacyAndCloudEvents() async throws {
        try await TestPostgres.withDatabase { db in
            try await withReceiver(db) { store, subscriptions, receiver, url, client in
                let dispatcher = EventWebhookDispatcher(
                    subscriptions: subscriptions, store: store, httpClient: client, clock: db.clock, eventSource: "urn:test:ledger")
                // As the migration leaves a subscription of before: a free-form secret, the plain format.
                let legacy = try await subscriptions.create(url: url, types: ["account.registered"], secret: Self.secret, after: .start)
                let plainSecret = "whsec-0123456789abcdef"
                try await db.client.query(
                    "UPDATE webhook_subscriptions SET secret_sealed = $2 WHERE id = $1",
                    [
                        .uuid(legacy.subscription.id),
                        .bytea(
                            try DataKey(bytes: db.masterKey.derivedKey(label: KeyLabel.webhookSubscriptionSecret)).seal(
                                Array(plainSecret.utf8), eventID: legacy.subscription.id)),
                    ])
                try await writeEvents(db, store: store, accounts: 1, prefix: "legacy")
                #expect(try await dispatcher.runOnce() == 1)
                let push = try #require(receiver.accepted.last)
                let headers = try #require(receiver.acceptedHeaders.last)
                #expect(WebhookSignature.isValid(push.signature, secret: plainSecret, body: push.body))
                #expect(
                    Self.standardSignatureValid(
                        headers[HTTPField.Name("webhook-signature")!] ?? "", id: headers[HTTPField.Name("webhook-id")!] ?? "",
                        timestamp: headers[HTTPField.Name("webhook-timestamp")!] ?? "", body: push.body, secret: plainSecret))
                _ = try await subscriptions.delete(legacy.subscription.id)

                let batch = try await subscriptions.create(
                    url: url, types: ["account.registered"], secret: nil, format: "cloudevents", after: .start)
                #expect(batch.subscription.format == .cloudevents)
                #expect(try await dispatcher.runOnce() == 1)
                let pushed = try #require(receiver.accepted.last)
                #expect(receiver.acceptedHeaders.last?[.contentType] == "application/cloudevents-batch+json")
                let events = try #require(try JSONSerialization.jsonObject(with: Data(pushed.body)) as? [[String: Any]])
                #expect(events.count == 1)
                #expect(events[0]["specversion"] as? String == "1.0" && events[0]["source"] as? String == "urn:test:ledger")
                #expect(events[0]["type"] as? String == "fit321.ledger.account.registered")
                #expect(events[0]["ledgercursor"] is String && events[0]["data"] is [String: Any])
            }
        }
    }

    @Test("a pusher already sending signs the next batch with the secrets of now, and stops once its subscription is deleted or paused")
    func stateBetweenBatches() async throws {
        try await TestPostgres.withDatabase { db in
            let subscriptions = try WebhookSubscriptions(store: db.eventStore(), masterKey: db.masterKey, clock: db.clock)
            let owner = UUID()
            let made = try await subscriptions.create(url: "https://hooks.example.net/h", types: nil, secret: Self.secret, after: .start)
            let claimed = try #require(try await subscriptions.claimDue(owner: owner, lease: 60))
            #expect(claimed.secrets.map(\.text) == [Self.secret])
            let rotated = try #require(try await subscriptions.rotateSecret(made.subscription.id))
            let next = try await subscriptions.recordDelivered(made.subscription.id, owner: owner, through: .start, count: 0, lease: 60)
            #expect(next?.map(\.text) == [rotated.text, Self.secret])
            db.clock.advance(by: WebhookSubscriptions.rotationOverlap)
            let later = try await subscriptions.recordDelivered(made.subscription.id, owner: owner, through: .start, count: 0, lease: 60)
            #expect(later?.map(\.text) == [rotated.text])
            _ = try await subscriptions.setStatus(made.subscription.id, .paused, reason: "operator")
            #expect(
                try await subscriptions.recordDelivered(made.subscription.id, owner: owner, through: .start, count: 0, lease: 60) == nil)
            _ = try await subscriptions.setStatus(made.subscription.id, .active)
            _ = try await subscriptions.delete(made.subscription.id)
            #expect(
                try await subscriptions.recordDelivered(made.subscription.id, owner: owner, through: .start, count: 0, lease: 60) == nil)
        }
    }
}
