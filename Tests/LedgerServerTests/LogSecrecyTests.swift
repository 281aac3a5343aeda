import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import Logging
import NIOCore
import Testing

/// Collects every log line, with its metadata, as text.
final class CapturedLogs: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var text: String { lock.withLock { lines.joined(separator: "\n") } }
    var count: Int { lock.withLock { lines.count } }
}

struct CapturingLogHandler: LogHandler {
    let store: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        store.append("\(event.level) \(event.message) \(merged.map { "\($0)=\($1)" }.sorted().joined(separator: " "))")
    }
}

@Suite("Logs hold no secrets", .timeLimit(.minutes(10)))
struct LogSecrecyTests {
    @Test("a full session's logs name no token, password or email")
    func noSecretsInLogs() async throws {
        try await MemoryBackend.with { db in
            let logs = CapturedLogs()
            let logger = Logger(label: "ledger.test") { _ in CapturingLogHandler(store: logs) }
            let app = Application(
                router: buildRouter(try db.dependencies()), logger: logger)
            let email = "Secret.Person@example.com"
            let password = "violet-harbor-91"
            let fixed = [email, email.lowercased(), password, "wrong-pass-123"]
            let issued = try await app.test(.router) { client -> [String] in
                let tokens = try await client.execute(
                    uri: "/auth/email/signup", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": email, "password": password])
                ) { response in
                    let body = try json(response)
                    return (body["access_token"] as? String ?? "", body["refresh_token"] as? String ?? "")
                }
                try await client.execute(
                    uri: "/auth/email/login", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": email, "password": "wrong-pass-123"])
                ) { _ in }
                let refreshed = try await client.execute(
                    uri: "/auth/token/refresh", method: .post, headers: jsonHeaders, body: jsonBody(["refresh_token": tokens.1])
                ) { try json($0)["access_token"] as? String ?? "" }
                try await client.execute(uri: "/auth/email-available?email=\(email)", method: .get, headers: bearer(refreshed)) { _ in }
                try await client.execute(uri: "/me", method: .get, headers: bearer(refreshed)) { _ in }
                try await client.execute(
                    uri: "/auth/token/refresh", method: .post, headers: jsonHeaders, body: jsonBody(["refresh_token": tokens.1])
                ) { _ in }
                // Phone codes, a re-auth grant, and a wrong code.
                let signedIn = try await logIn(client, email: email, password: password)
                let addGrant = try await emailLinkGrant(client, db, token: signedIn)
                let requestID = try await requestOTP(client, "+995 511 200 300", purpose: "add_phone", token: signedIn, reauth: addGrant)
                let code = try await otpCode(db, phone: "+995511200300")
                _ = try await verifyOTP(client, requestID, wrongCode(code), token: signedIn, reauth: addGrant)
                _ = try await verifyOTP(client, requestID, code, token: signedIn, reauth: addGrant)
                let grant = try await call(client, .post, "/auth/reauth/password", ["password": password], token: signedIn)
                let nonce = try await call(client, .post, "/auth/reauth/nonce", token: signedIn)
                return [
                    tokens.0, tokens.1, refreshed, signedIn, code, "+995511200300", grant.string("reauth_token") ?? "missing", addGrant,
                    nonce.string("nonce") ?? "missing",
                ]
            }
            let secrets = fixed + issued
            #expect(logs.count >= 6, "the request log lines were captured")
            let text = logs.text
            #expect(text.contains("path=/auth/email-available"))
            for secret in secrets where !secret.isEmpty {
                #expect(!text.contains(secret), "a secret reached the logs")
            }
        }
    }
}
