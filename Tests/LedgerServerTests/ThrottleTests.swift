import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerCore
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: login throttling", .timeLimit(.minutes(10)))
struct ThrottleTests {
    /// Signs up ana and runs the lockout through two clients taking turns (two instances on
    /// PostgreSQL, RaceTests.throttleSharedAcrossInstances; the same one on memory): 5 failures
    /// lock the 6th attempt out for 15 minutes, and a success clears the count.
    static func lockout(_ a: some TestClientProtocol, _ b: some TestClientProtocol, clock: ManualClock) async throws {
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
        clock.advance(by: 899)
        try await a.execute(uri: "/auth/email/login", method: .post, headers: jsonHeaders, body: right) { response in
            #expect(response.status == .tooManyRequests)
            let body = try json(response)
            #expect(body["retry_after"] as? Int == 1)
        }
        clock.advance(by: 1)
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

    @Test("5 failures lock the 6th attempt out with 429 until the lockout ends; every failure is on the account's history")
    func lockout() async throws {
        try await MemoryBackend.with { db in
            try await testApplication(db).test(.router) { client in
                try await Self.lockout(client, client, clock: db.clock)
                let access = try await logIn(client, email: "ana@example.com")
                let accountID = try #require(
                    try await call(client, .get, "/me", token: access).string("account_id").flatMap(UUID.init(uuidString:)))
                let types = try await db.history(of: accountID).map(\.type).filter { $0.hasPrefix("login.") }
                #expect(
                    types == Array(repeating: "login.failed", count: 5) + ["login.throttled"] + Array(repeating: "login.failed", count: 4))
            }
        }
    }

    @Test("failures older than the window do not count")
    func windowExpiry() async throws {
        try await MemoryBackend.with { db in
            let app = try testApplication(db)
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
