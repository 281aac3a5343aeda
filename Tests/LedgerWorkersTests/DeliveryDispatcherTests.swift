import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerDelivery
import LedgerIdentity
import LedgerPostgres
import LedgerTestSupport
import LedgerWorkers
import NIOCore
import Testing

/// Keeps what it was given; fails the first `failures` deliveries with `failure`.
final class RecordingSink: DeliverySink, @unchecked Sendable {
    private let lock = NSLock()
    private var remainingFailures: Int
    private var received: [OutboxMessage] = []
    private let failure: DeliveryError

    init(failures: Int = 0, failure: DeliveryError = DeliveryError("the bridge answered 503")) {
        remainingFailures = failures
        self.failure = failure
    }

    var messages: [OutboxMessage] { lock.withLock { received } }
    var provider: String { "recording" }

    func deliver(_ message: OutboxMessage) async throws {
        try lock.withLock {
            if remainingFailures > 0 {
                remainingFailures -= 1
                throw failure
            }
            received.append(message)
        }
    }
}

/// The outcomes a dispatcher reported, as `/metrics` counts them.
final class OutcomeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String] = []
    var outcomes: [String] { lock.withLock { seen } }
    func record(_ channel: String, _ provider: String, _ outcome: DeliveryOutcome) {
        lock.withLock { seen.append("\(channel) \(provider) \(outcome.rawValue)") }
    }
}

func accountService(_ db: TestDatabase) throws -> AccountService {
    AccountService(environment: try db.accountsEnvironment(db.eventStore()))
}

@Suite("Delivery outbox", .timeLimit(.minutes(10)))
struct DeliveryDispatcherTests {
    @Test("a running dispatcher wakes on the commit that wrote a message, not at its next poll; 70 messages in one go")
    func wakesOnCommit() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let service = AccountService(environment: try db.accountsEnvironment(store))
            let sink = RecordingSink()
            let dispatcher = DeliveryDispatcher(client: db.client, sink: sink, clock: db.clock, store: store)
            let running = Task { await dispatcher.run(every: .seconds(600)) }
            defer { running.cancel() }
            try await Task.sleep(for: .milliseconds(100))
            for wave in 0..<7 {  // ten at a time: the password hasher's pool is bounded
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<10 {
                        group.addTask {
                            _ = try await service.signUp(
                                email: "user\(wave)-\(index)@example.com", password: "violet-harbor-91", displayName: nil,
                                handle: nil, device: nil)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while sink.messages.count < 70 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(sink.messages.count == 70)
            #expect(Set(sink.messages.map(\.id)).count == 70)
        }
    }

    @Test("a sign-up's verification email is delivered once, then its secrets are blanked")
    func deliversAndBlanks() async throws {
        try await TestPostgres.withDatabase { db in
            _ = try await accountService(db).signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let sink = RecordingSink()
            let dispatcher = DeliveryDispatcher(client: db.client, sink: sink, clock: db.clock)
            #expect(try await dispatcher.runOnce() == 1)
            #expect(try await dispatcher.runOnce() == 0)
            let message = try #require(sink.messages.first)
            #expect(message.channel == .email && message.to == "ana@example.com" && message.template == "verify_email")
            let token = try #require(message.token)
            #expect(message.link == "https://321.fit/verify-email?token=\(token)")
            let row = try await db.client.query("SELECT token, link, delivered_at IS NOT NULL FROM outbox")[0]
            #expect(row.isNull(0) && row.isNull(1))
            #expect(try row.bool(2) == true)
        }
    }

    @Test("failures are retried with exponential backoff, then given up and recorded")
    func retriesThenGivesUp() async throws {
        try await TestPostgres.withDatabase { db in
            _ = try await accountService(db).signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            var dispatcher = DeliveryDispatcher(client: db.client, sink: RecordingSink(failures: 100), clock: db.clock)
            dispatcher.maximumAttempts = 3
            #expect(try await dispatcher.runOnce() == 0)
            // Not due again before its 2-second backoff.
            db.clock.advance(by: 1.9)
            #expect(try await db.client.query("SELECT attempts FROM outbox")[0].int(0) == 1)
            _ = try await dispatcher.runOnce()
            #expect(try await db.client.query("SELECT attempts FROM outbox")[0].int(0) == 1)
            db.clock.advance(by: 0.2)
            _ = try await dispatcher.runOnce()
            #expect(try await db.client.query("SELECT attempts FROM outbox")[0].int(0) == 2)
            db.clock.advance(by: 4.1)
            _ = try await dispatcher.runOnce()
            let row = try await db.client.query("SELECT attempts, failed_at IS NOT NULL, last_error, token FROM outbox")[0]
            #expect(try row.int(0) == 3)
            #expect(try row.bool(1) == true)
            #expect(row.string(2) == "the bridge answered 503")
            #expect(row.isNull(3))
            #expect(DeliveryDispatcher.backoff(afterAttempt: 1) == 2)
            #expect(DeliveryDispatcher.backoff(afterAttempt: 30) == 3600)
        }
    }

    @Test(
        "a permanent failure is given up at once, its recipient and the relay's words masked; a temporary one is retried within the window")
    func permanentAndWindow() async throws {
        try await TestPostgres.withDatabase { db in
            _ = try await accountService(db).signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let outcomes = OutcomeLog()
            let refused = DeliveryError("550 5.1.1 <ana@example.com>: no such user", kind: .permanent)
            var dispatcher = DeliveryDispatcher(client: db.client, sink: RecordingSink(failures: 1, failure: refused), clock: db.clock)
            dispatcher.observe = outcomes.record
            #expect(try await dispatcher.runOnce() == 0)
            let row = try await db.client.query(
                "SELECT attempts, failed_at IS NOT NULL, last_error, recipient, recipient_masked, provider FROM outbox")[0]
            #expect(try row.int(0) == 1 && (try row.bool(1)) == true)
            #expect(row.string(2) == "550 5.1.1 <a•••@example.com>: no such user")
            #expect(row.isNull(3) && row.string(4) == "a•••@example.com" && row.string(5) == "recording")
            #expect(outcomes.outcomes == ["email recording failed"])
            // What `ledger deliveries list --failed` shows: nothing but masked.
            let failed = try await Outbox.failed(limit: 10, client: db.client)
            #expect(failed.map(\.recipient) == ["a•••@example.com"] && failed.map(\.template) == ["verify_email"])
            #expect(failed.first?.error?.contains("ana@") == false && failed.first?.provider == "recording")

            // Temporary: tried at 0, 2 and 6 s; the next try (14 s) is past a 10-second window.
            try await db.client.query("DELETE FROM outbox")
            _ = try await accountService(db).signUp(
                email: "bo@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let busy = OutcomeLog()
            var windowed = DeliveryDispatcher(client: db.client, sink: RecordingSink(failures: 100), clock: db.clock)
            windowed.retryWindow = 10
            windowed.observe = busy.record
            for wait in [0.0, 2.1, 4.1] {
                db.clock.advance(by: wait)
                _ = try await windowed.runOnce()
            }
            let given = try await db.client.query("SELECT attempts, failed_at IS NOT NULL FROM outbox")[0]
            #expect(try given.int(0) == 3 && (try given.bool(1)) == true)
            #expect(busy.outcomes == ["email recording retrying", "email recording retrying", "email recording failed"])
        }
    }

    @Test("a code is not sent, nor retried, once it has expired; a dispatcher claims only its channels")
    func expiryAndChannels() async throws {
        try await TestPostgres.withDatabase { db in
            func enqueue(_ channel: String, _ recipient: String, expiresIn seconds: TimeInterval?) async throws -> UUID {
                let id = UUID()
                let now = db.clock.now()
                try await db.client.query(
                    """
                    INSERT INTO outbox (id, channel, recipient, template, code, created_at, next_attempt_at, expires_at)
                    VALUES ($1, $2, $3, 'otp', '482915', $4, $4, $5)
                    """,
                    [
                        .uuid(id), .text(channel), .text(recipient), .timestamp(now),
                        seconds.map { .timestamp(now.addingTimeInterval($0)) } ?? .null,
                    ])
                return id
            }
            let fresh = try await enqueue("sms", "+995511200301", expiresIn: 300)
            let late = try await enqueue("sms", "+995511200302", expiresIn: 5)
            let mail = try await enqueue("email", "ana@example.com", expiresIn: nil)

            // Texts only: the email waits for its own dispatcher.
            let sink = RecordingSink(failures: 1)
            var texts = DeliveryDispatcher(client: db.client, sink: sink, clock: db.clock)
            texts.channels = [.sms]
            _ = try await texts.runOnce()
            #expect(sink.messages.count == 1)
            // The failed one's retry would come after its code expired (at 5 s, retry at 2 s is fine: it goes).
            db.clock.advance(by: 2.1)
            _ = try await texts.runOnce()
            #expect(Set(sink.messages.map(\.to)) == ["+995511200301", "+995511200302"])
            func state(_ id: UUID) async throws -> (delivered: Bool, failed: Bool) {
                let row = try await db.client.query(
                    "SELECT delivered_at IS NOT NULL, failed_at IS NOT NULL FROM outbox WHERE id = $1", [.uuid(id)])[0]
                return (try row.bool(0) == true, try row.bool(1) == true)
            }
            let (freshState, lateState) = (try await state(fresh), try await state(late))
            #expect(freshState.delivered && lateState.delivered)
            #expect(try await state(mail) == (false, false))

            // A text whose code expires while it waits for its retry is given up, never sent late.
            let expiring = try await enqueue("sms", "+995511200303", expiresIn: 3)
            let failing = RecordingSink(failures: 100)
            var retrying = DeliveryDispatcher(client: db.client, sink: failing, clock: db.clock)
            retrying.channels = [.sms]
            _ = try await retrying.runOnce()
            #expect(try await state(expiring) == (false, false), "first try at 0 s, retry due at 2 s, before the code's 3 s")
            db.clock.advance(by: 2.1)
            _ = try await retrying.runOnce()
            #expect(try await state(expiring).failed, "the next retry (4 s later) would be after it expired")
            let expired = try await enqueue("sms", "+995511200304", expiresIn: -1)
            let untouched = RecordingSink()
            var late2 = DeliveryDispatcher(client: db.client, sink: untouched, clock: db.clock)
            late2.channels = [.sms]
            _ = try await late2.runOnce()
            let expiredState = try await state(expired)
            #expect(untouched.messages.isEmpty && expiredState.failed)
            let error = try await db.client.query("SELECT last_error, code IS NULL FROM outbox WHERE id = $1", [.uuid(expired)])[0]
            let codeCleared = try error.bool(1) == true
            #expect(error.string(0) == "its code or link expired before it could be sent" && codeCleared)

            var emails = DeliveryDispatcher(client: db.client, sink: untouched, clock: db.clock)
            emails.channels = [.email]
            _ = try await emails.runOnce()
            #expect(untouched.messages.map(\.to) == ["ana@example.com"])
        }
    }

    @Test("the webhook sink POSTs the delivery payload, signed over timestamp and body")
    func webhook() async throws {
        let received = ReceivedRequests()
        let router = Router()
        router.post("/deliveries") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 65_536)
            received.add(signature: request.headers[HTTPField.Name("X-Ledger-Signature")!] ?? "", body: Array(buffer: body))
            received.standard = ["webhook-id", "webhook-timestamp", "webhook-signature"].map {
                request.headers[HTTPField.Name($0)!] ?? ""
            }
            return .noContent
        }
        let clock = ManualClock()
        let message = OutboxMessage(channel: .sms, to: "+995511200300", template: "otp", code: "482915")
        try await withLoopbackServer(router, label: "webhook-sink") { port in
            // Its own client, closed before the server stops, so no connection is cut mid-stream.
            try await withHTTPClient { httpClient in
                let sink = WebhookDeliverySink(
                    url: "http://127.0.0.1:\(port)/deliveries", secret: "s3cret", httpClient: httpClient, clock: clock)
                try await sink.deliver(message)
                await #expect(throws: (any Error).self) {
                    try await WebhookDeliverySink(url: "http://127.0.0.1:\(port)/missing", secret: nil, httpClient: httpClient)
                        .deliver(message)
                }
            }
        }
        let (signature, body) = try #require(received.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: String])
        #expect(
            object == [
                "id": message.id.uuidString.lowercased(), "channel": "sms", "to": "+995511200300",
                "template": "otp", "code": "482915", "locale": "en",
                // Under the signature: a receiver refuses an old one (a replay).
                "sent_at": RFC3339.format(clock.now()),
            ])
        // `X-Ledger-Signature` (docs/event-consumers.md): the hex HMAC-SHA256 of the raw body, nothing else.
        #expect(signature == Hex.encode(HMACSHA256.authenticate(key: Array("s3cret".utf8), message: body)))
        #expect(signature.count == 64 && signature == signature.lowercased())
        // And Standard Webhooks' headers, the message's id being the same on every retry.
        let standard = received.standard
        #expect(
            standard[0] == "msg_" + message.id.uuidString.lowercased() && standard[1] == String(Int64(clock.now().timeIntervalSince1970)))
        #expect(
            EventWebhookDispatcherTests.standardSignatureValid(
                standard[2], id: standard[0], timestamp: standard[1], body: body, secret: "s3cret"))
    }
}

final class ReceivedRequests: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [(String, [UInt8])] = []
    private var standardHeaders: [String] = []
    /// `webhook-id`, `webhook-timestamp` and `webhook-signature` of the last request.
    var standard: [String] {
        get { lock.withLock { standardHeaders } }
        set { lock.withLock { standardHeaders = newValue } }
    }
    func add(signature: String, body: [UInt8]) { lock.withLock { items.append((signature, body)) } }
    var first: (String, [UInt8])? { lock.withLock { items.first } }
}
