import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

@testable import LedgerClient

/// Records the `X-Reauth-Token` each operation carried, and answers `/me`'s body.
final class GrantRecorder: ClientTransport {
    let grants = Mutex<[String: String]>([:])

    func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let grant = HTTPField.Name("X-Reauth-Token").flatMap { request.headerFields[$0] } ?? "-"
        grants.withLock { $0[operationID] = grant }
        return FakeLedger.json(
            #"{"account_id":"a","user_id":"usr_0123456789","display_name":null,"handle":null,"handle_is_temporary":true,"#
                + #""email":null,"email_verified":false,"created_at":"2026-12-06T08:54:25Z","avatar_url":"https://ledger.test/avatars/usr_0000000000.svg"}"#
        )
    }
}

@Suite("The session's headers: where a grant goes, and never in the clear")
struct SessionMiddlewareTests {
    @Test("the operations given a re-auth grant are exactly those openapi.yaml says take one")
    func grantOperationsMatchTheDocument() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let operations = try String(
            contentsOf: root.appendingPathComponent("Sources/LedgerClient/Generated/Types+Operations.swift"), encoding: .utf8)
        // Each operation's enum starts with its id; its input's headers follow.
        var taking: Set<String> = []
        for chunk in operations.components(separatedBy: "public static let id: Swift.String = \"").dropFirst() {
            let id = String(chunk.prefix { $0 != "\"" })
            let input = chunk.components(separatedBy: "public enum Output").first ?? ""
            if input.contains("xReauthToken") { taking.insert(id) }
        }
        #expect(taking.count > 10)
        #expect(SessionMiddleware.takingGrant == taking)
    }

    @Test("a kept grant goes to the operations that take one, not to every call")
    func grantOnlyWhereTaken() async throws {
        let transport = GrantRecorder()
        let (session, _) = try LedgerSessionTests.session(
            over: transport, access: "access-0", refresh: "refresh-0", endingIn: 900)
        await session.keep(ReauthGrant(token: "lg_grant", expiresAt: Date.distantFuture))
        _ = try? await session.client.me()
        _ = try? await session.client.changePassword(body: .json(.init(newPassword: "copper-lantern-77")))
        let grants = transport.grants.withLock { $0 }
        #expect(grants["me"] == "-")
        #expect(grants["changePassword"] == "lg_grant")
    }

    @Test("nothing is sent to a service over plain http but on loopback")
    func plainHTTPRefused() async throws {
        for (url, allowed) in [
            ("http://ledger.example.com", false), ("http://10.0.0.7:8080", false), ("https://ledger.example.com", true),
            ("http://127.0.0.1:8080", true), ("http://localhost:8080", true), ("http://[::1]:8080", true),
        ] {
            #expect(SessionMiddleware.isPrivate(try #require(URL(string: url))) == allowed, "\(url)")
        }
        let transport = GrantRecorder()
        let session = LedgerSession(
            serverURL: try #require(URL(string: "http://ledger.example.com")), transport: transport, storage: MemoryTokenStorage())
        let refused = await #expect(throws: ClientError.self) {
            _ = try await session.client.emailSignIn(body: .json(.init(email: "ana@example.org", password: "violet-harbor-91")))
        }
        #expect((refused?.underlyingError as? LedgerClientError)?.code == .insecureServer)
        #expect(transport.grants.withLock { $0.isEmpty }, "the password never left")
    }
}
