import Foundation
import LedgerAccounts
import LedgerCrypto
import LedgerIdentity
import LedgerTestSupport
import LedgerWorkers
import Testing

/// Records revocations; the token endpoints are never called otherwise.
final class RecordingRevoker: ProviderTokenClient, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [(IdentityProvider, String, String)] = []
    var revocations: [(provider: IdentityProvider, token: String, clientID: String)] { lock.withLock { received } }

    func canExchange(_ provider: IdentityProvider) -> Bool { true }
    func exchange(code: String, provider: IdentityProvider, clientID: String, subject: String) async throws -> String {
        throw ProviderTokenError(.rejected, provider, "not in this test")
    }
    func revoke(refreshToken: String, provider: IdentityProvider, clientID: String) async throws {
        lock.withLock { received.append((provider, refreshToken, clientID)) }
    }
}

@Suite("Delivery outbox: provider revocations", .timeLimit(.minutes(10)))
struct ProviderRevocationDeliveryTests {
    @Test("a revocation goes to the provider, never to the delivery webhook; without provider credentials it waits and is retried")
    func routed() async throws {
        try await TestPostgres.withDatabase { db in
            _ = try await accountService(db).signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let revocations = ProviderTokenRevocations(masterKey: db.masterKey)
            let message = try revocations.message(
                revoking: .init(provider: .apple, subject: "a-1", clientID: "fit.321.ios", refreshToken: "r.secret"))
            try await db.client.query(
                """
                INSERT INTO outbox (id, channel, recipient, template, token, created_at, next_attempt_at)
                VALUES ($1, 'provider', $2, $3, $4, $5, $5)
                """,
                [.uuid(message.id), .text(message.to), .text(message.template), .text(message.token ?? ""), .timestamp(db.clock.now())])
            let sink = RecordingSink()
            #expect(try await DeliveryDispatcher(client: db.client, sink: sink, clock: db.clock).runOnce() == 1)
            #expect(sink.messages.map(\.channel) == [.email])
            let waiting = try await db.client.query("SELECT attempts, last_error IS NOT NULL FROM outbox WHERE channel = 'provider'")
            #expect(try waiting[0].int(0) == 1 && waiting[0].bool(1) == true)

            db.clock.advance(by: DeliveryDispatcher.backoff(afterAttempt: 1) + 1)
            let revoker = RecordingRevoker()
            let dispatcher = DeliveryDispatcher(
                client: db.client, sink: sink, revocations: ProviderRevocationSink(revocations: revocations, client: revoker),
                clock: db.clock)
            #expect(try await dispatcher.runOnce() == 1)
            #expect(revoker.revocations.map(\.token) == ["r.secret"] && revoker.revocations.map(\.clientID) == ["fit.321.ios"])
            #expect(sink.messages.count == 1)
        }
    }
}
