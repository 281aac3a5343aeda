import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: login throttling", .timeLimit(.minutes(10)))
struct ThrottleTests {
    /// Two instances (own pools, own services) on one database, one clock.
    @Test("5 failures across two instances lock the 6th attempt out with 429 until the lockout ends")
    func sharedAcrossInstances() async throws {
        try await TestPostgres.withDatabase { db in
            let secondClient = PostgresClient(configuration: .init(url: db.url, maximumConnections: 4))
            defer { Task { await secondClient.shutdown() } }
            let appA = Application(
                router: buildRouter(
                    try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)))
            let appB = Application(
                router: buildRouter(
                    try makeServices(url: db.url, client: secondClient, clock: db.clock, masterKey: db.masterKey)))
            try await appA.test(.router) { a in
                try await appB.test(.router) { b in
                    _ = try await signUp(a, email: "ana@example.com")
                    let wrong = jsonBody(["email": "ana@example.com", "password": "not-the-password"])
                    let right = jsonBody(["email": "ANA@example.com", "password": "violet-harbor-91"])
                    for attempt in 1...5 {
                        let instance: any TestClientProtocol = attempt % 2 == 0 ? a : b
                        try await instance.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: wrong) {
                            #expect($0.status == .unauthorized, "attempt \(attempt)")
                        }
                    }
                    for client in [a, b] as [any TestClientProtocol] {
                        try await client.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: right) { response in
                            expectConforms(response, "post", "/auth/email/login")
                            #expect(response.status == .tooManyRequests)
                            let body = try json(response)
                            #expect(body["error"] as? String == "too_many_attempts")
                            #expect(body["retry_after"] as? Int == 900)
                            #expect(response.headers[.retryAfter] == "900")
                        }
                    }
                    db.clock.advance(by: 899)
                    try await a.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: right) { response in
                        #expect(response.status == .tooManyRequests)
                        let body = try json(response)
                        #expect(body["retry_after"] as? Int == 1)
                    }
                    db.clock.advance(by: 1)
                    try await b.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: right) {
                        #expect($0.status == .ok)
                    }
                    // A success clears the count: four more failures do not lock.
                    for _ in 1...4 {
                        try await a.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: wrong) {
                            #expect($0.status == .unauthorized)
                        }
                    }
                    try await a.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: right) {
                        #expect($0.status == .ok)
                    }
                }
            }
            let types = try await db.client.query("SELECT event_type FROM events WHERE event_type LIKE 'login.%' ORDER BY global_position")
            // Every failure is on the account's history (5, the lockout, then 4), not only the one that locked.
            #expect(
                types.rows.compactMap { $0.string(0) } == Array(repeating: "login.failed", count: 5) + ["login.throttled"]
                    + Array(repeating: "login.failed", count: 4))
            let stored = try await db.client.query("SELECT key FROM login_throttle")
            #expect(stored.rows.allSatisfy { !($0.string(0) ?? "").contains("ana@") })
        }
    }

    @Test("failures older than the window do not count")
    func windowExpiry() async throws {
        try await TestPostgres.withDatabase { db in
            let app = Application(router: buildRouter(try makeServices(url: db.url, client: db.client, clock: db.clock)))
            try await app.test(.router) { client in
                _ = try await signUp(client, email: "ana@example.com")
                let wrong = jsonBody(["email": "ana@example.com", "password": "not-the-password"])
                for _ in 1...4 {
                    try await client.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: wrong) { _ in }
                }
                db.clock.advance(by: 901)
                for _ in 1...4 {
                    try await client.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: wrong) {
                        #expect($0.status == .unauthorized)
                    }
                }
                try await client.execute(
                    uri: "/auth/email/login", method: .post, headers: jsonHeaders,
                    body: jsonBody(["email": "ana@example.com", "password": "violet-harbor-91"])
                ) { #expect($0.status == .ok) }
            }
        }
    }
}
