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
                + #""email":null,"email_verified":false,"created_at":"2026-12-06T08:54:25Z"}"#)
    }

    static func json(_ text: String) -> (HTTPResponse, HTTPBody?) {
        (HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]), HTTPBody(text))
    }
}

@Suite("LedgerSession without a network")
struct LedgerSessionTests {
    @Test("calls waiting on a token near its end share one refresh, and the new pair is kept")
    func oneRefreshForConcurrentCalls() async throws {
        let transport = FakeLedger()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let storage = MemoryTokenStorage(
            SessionTokens(
                accountID: "a", sessionID: "s", accessToken: "access-0", refreshToken: "refresh-0",
                accessTokenExpiresAt: start.addingTimeInterval(30), deviceToken: "device-1"))
        let session = LedgerSession(
            serverURL: try #require(URL(string: "http://ledger.test")), transport: transport, storage: storage, now: { start })
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
}
