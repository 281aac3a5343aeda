import Foundation
import HTTPTypes
import LedgerClient
import OpenAPIRuntime
import Synchronization
import Testing

/// Answers the session's calls in memory: `/auth/token/refresh` with a new pair after a pause
/// (so calls pile up behind it), sign-out with `204`, everything else with `/me`'s body; counts
/// what it saw.
final class FakeLedger: ClientTransport {
    let refreshes = Mutex(0)
    let authorizations = Mutex<[String]>([])

    func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        if operationID == "refreshSession" {
            let count = refreshes.withLock { count in
                count += 1
                return count
            }
            try await Task.sleep(for: .milliseconds(50))
            return Self.json(
                #"{"account_id":"a","session_id":"s","access_token":"access-\#(count)","refresh_token":"refresh-\#(count)","#
                    + #""expires_in":900,"email_verified":true,"device_token":"device-1"}"#)
        }
        if operationID == "logout" { return (HTTPResponse(status: .noContent), nil) }
        authorizations.withLock { $0.append(request.headerFields[.authorization] ?? "") }
        return Self.json(
            #"{"account_id":"a","user_id":"usr_0123456789","display_name":null,"handle":null,"handle_is_temporary":true,"#
                + #""email":null,"email_verified":false,"created_at":"2026-12-06T08:54:25Z","avatar_url":"https://ledger.test/avatars/usr_0000000000.svg"}"#
        )
    }

    static func json(_ text: String) -> (HTTPResponse, HTTPBody?) {
        (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), HTTPBody(text))
    }
}

/// A network that is down: every call fails before an answer.
struct Offline: ClientTransport {
    struct Unreachable: Error {}

    func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        throw Unreachable()
    }
}

@Suite("LedgerSession without a network")
struct LedgerSessionTests {
    /// A session over `transport` whose stored access token ends in `seconds` (30: within the
    /// refresh margin; the clock stands still).
    static func session(
        over transport: some ClientTransport, access: String, refresh: String, endingIn seconds: TimeInterval = 30
    ) throws -> (LedgerSession, MemoryTokenStorage) {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let storage = MemoryTokenStorage(
            SessionTokens(
                accountID: "a", sessionID: "s", accessToken: access, refreshToken: refresh,
                accessTokenExpiresAt: start.addingTimeInterval(seconds), deviceToken: "device-1"))
        let session = LedgerSession(
            serverURL: try #require(URL(string: "https://ledger.test")), transport: transport, storage: storage, now: { start })
        return (session, storage)
    }

    @Test("calls waiting on a token near its end share one refresh, and the new pair is kept")
    func oneRefreshForConcurrentCalls() async throws {
        let transport = FakeLedger()
        let (session, storage) = try Self.session(over: transport, access: "access-0", refresh: "refresh-0")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { _ = try await session.client.me().ok.body.json } }
            try await group.waitForAll()
        }
        #expect(transport.refreshes.withLock { $0 } == 1)
        #expect(transport.authorizations.withLock { $0 } == Array(repeating: "Bearer access-1", count: 20))
        #expect(await storage.load()?.refreshToken == "refresh-1")
        try await session.signOut()
        #expect(await storage.load() == nil)
    }

    @Test(
        "a failed call's error names the call and the kind of failure, never the password or the refresh token; sign-out offline still forgets the tokens"
    )
    func failuresKeepSecrets() async throws {
        let (session, storage) = try Self.session(over: Offline(), access: "access-secret-0", refresh: "refresh-secret-0")
        let signIn = await #expect(throws: LedgerClientError.self) {
            try await session.signIn(email: "ana@example.org", password: "secret-password-91")
        }
        #expect(signIn?.code == .transport)
        #expect(!String(describing: signIn).contains("secret-password-91") && String(describing: signIn).contains("sign-in"))
        // The token is near its end: the call refreshes first, and the refresh fails.
        // (The generated client wraps what its middleware threw in its own ClientError.)
        let refresh = await #expect(throws: ClientError.self) { try await session.client.me() }
        #expect((refresh?.underlyingError as? LedgerClientError)?.code == .refreshFailed)
        #expect(!String(describing: refresh).contains("refresh-secret-0"))
        #expect(await storage.load()?.refreshToken == "refresh-secret-0", "a passing failure keeps the session")
        await #expect(throws: LedgerClientError.self) { try await session.signOut() }
        #expect(await storage.load() == nil, "signed out on this device, whatever the network did")
        #expect(try await session.tokens == nil)
    }
}
