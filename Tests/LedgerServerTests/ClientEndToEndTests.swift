import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerClient
import LedgerClientAsyncHTTPClient
import LedgerTestSupport
import OpenAPIRuntime
import OpenAPIURLSession
import Synchronization
import Testing

/// Counts the calls of each operation a client makes.
final class OperationCounter: ClientMiddleware {
    let counts = Mutex<[String: Int]>([:])

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        counts.withLock { $0[operationID, default: 0] += 1 }
        return try await next(request, body, baseURL)
    }
}

/// The generated client (Sources/LedgerClient) and `LedgerSession` against the real service: a
/// live app on 127.0.0.1 on a real PostgreSQL, over the real transports, with the generated
/// client's default settings (docs/clients.md).
@Suite("The Swift client against the service")
struct ClientEndToEndTests {
    @Test("an app's first hour over URLSession: sign up, verify by the link, sign in, the hub, re-auth, sign out")
    func appFirstHour() async throws {
        try await Self.withLiveService { db, _, url in
            let storage = MemoryTokenStorage()
            let session = LedgerSession(serverURL: url, storage: storage)
            let signedUp = try await session.signUp(email: "ana@example.com", password: "violet-harbor-91")
            #expect(signedUp.deviceToken != nil)

            // The link's token, from the message the delivery sink would send.
            let link = try #require(try await db.newestMessage(template: "verify_email", to: "ana@example.com")?.token)
            #expect(try await session.client.verifyEmail(body: .json(.init(token: link))).ok.body.json.emailVerified)

            try await session.signOut()
            #expect(try await session.tokens == nil)
            guard case .signedIn(let tokens) = try await session.signIn(email: "ana@example.com", password: "violet-harbor-91") else {
                Issue.record("two-factor is off: a sign-in answers a session")
                return
            }
            // X-Device-Token went back with the sign-in: the same device.
            #expect(tokens.deviceToken == signedUp.deviceToken)

            // The hub and every GET an app makes, decoded with the generated client's defaults.
            let me = try await session.client.me().ok.body.json
            #expect(me.email == "ana@example.com" && me.emailVerified && me.accountId == tokens.accountID)
            #expect(me.createdAt != nil)
            let methods = try await session.client.authMethods().ok.body.json
            #expect(methods.hasPassword && methods.email == "ana@example.com")
            let sessions = try await session.client.listSessions().ok.body.json.sessions
            #expect(sessions.contains { $0.id == tokens.sessionID && $0.current })
            _ = try await session.client.countries().ok.body.json
            _ = try await session.client.support().ok.body.json
            _ = try await session.client.deletePreflight().ok.body.json
            _ = try await session.client.listPasskeys().ok.body.json
            _ = try await session.client.handleAvailable(query: .init(handle: "ana_1")).ok.body.json
            _ = try await session.client.emailAvailable(query: .init(email: "bob@example.com")).ok.body.json
            _ = try await session.client.exportAccount().ok.body.json

            // A password change asks for re-auth with the methods offered; the email link earns it.
            guard case .reauthRequired(let required) = try await session.changePassword(to: "copper-lantern-77") else {
                Issue.record("a session alone changes no password")
                return
            }
            #expect(required.action == "change_password" && required.methods == ["email_link"] && !required.lastMethod)
            _ = try await session.client.reauthEmailLink().accepted
            let reauthLink = try #require(try await db.newestMessage(template: "reauth_link", to: "ana@example.com")?.token)
            let grant = try await session.client.reauthEmailLinkConfirm(body: .json(.init(token: reauthLink))).ok.body.json
            await session.keep(ReauthGrant(token: grant.reauthToken, expiresAt: grant.expiresAt))
            guard case .done = try await session.changePassword(to: "copper-lantern-77") else {
                Issue.record("the grant is sent with the change")
                return
            }

            try await session.signOut()
            #expect(try await storage.load() == nil)
            if case .ok = try await session.client.me() { Issue.record("signed out, /me is 401") }
        }
    }

    @Test("over AsyncHTTPClient: calls waiting on a token near its end share exactly one refresh; GET /events with an API key")
    func serverRefreshAndFeed() async throws {
        try await Self.withLiveService { db, services, url in
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            try await withHTTPClient { http in
                // This device's clock: moved on to just before the access token's end.
                let offset = Mutex<TimeInterval>(0)
                let counter = OperationCounter()
                let session = LedgerSession(
                    serverURL: url, httpClient: http, storage: MemoryTokenStorage(), middlewares: [counter],
                    now: { Date().addingTimeInterval(offset.withLock { $0 }) })
                let first = try await session.signUp(email: "bob@example.com", password: "violet-harbor-91")
                offset.withLock { $0 = first.accessTokenExpiresAt.timeIntervalSinceNow - 30 }
                let accounts = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<12 { group.addTask { try await session.client.me().ok.body.json.accountId } }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                #expect(accounts == Array(repeating: first.accountID, count: 12))
                #expect(counter.counts.withLock { $0["refreshSession"] } == 1)
                let refreshed = try #require(try await session.tokens)
                #expect(refreshed.refreshToken != first.refreshToken && refreshed.sessionID == first.sessionID)

                // A backend follows the feed with the generated client's defaults: its Accept lists
                // both forms at q=1, and the plain JSON form wins the tie.
                let total = Int(try await db.client.query("SELECT count(*) FROM events")[0].int(0) ?? 0)
                try await services.eventStore.waitForFeed(count: total)
                let backend = Client.ledger(serverURL: url, apiKey: reader, httpClient: http)
                let page = try await backend.readEvents().ok.body.json
                #expect(!page.events.isEmpty && page.events.allSatisfy { $0.accountId == first.accountID })
                // Times to the second: what the default date transcoder decodes.
                let times = page.events.map(\.recordedAt.timeIntervalSince1970)
                #expect(times.allSatisfy { $0.rounded(.down) == $0 })
                let overURLSession = Client(
                    serverURL: url, transport: URLSessionTransport(), middlewares: [APIKeyMiddleware(apiKey: reader)])
                #expect(try await overURLSession.readEvents().ok.body.json.events.count == page.events.count)
            }
        }
    }

    /// The real service on a test database, live on 127.0.0.1, for `body` with its URL.
    static func withLiveService(_ body: @escaping @Sendable (TestDatabase, LedgerServices, URL) async throws -> Void) async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let app = Application(router: buildRouter(services), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { live in
                let port = try #require(live.port)
                try await body(db, services, try #require(URL(string: "http://127.0.0.1:\(port)")))
            }
        }
    }
}
