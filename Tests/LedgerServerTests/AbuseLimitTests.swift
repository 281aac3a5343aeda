import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerServer
import LedgerTestSupport
import Testing

/// docs/architecture.md "Abuse limits": each limit at its edge, counted before the lookup or the hash, per
/// client (an IPv6 client by its /64) and per signed-in account.
@Suite("HTTP: abuse limits", .timeLimit(.minutes(10)))
struct AbuseLimitTests {
    func app(_ db: MemoryBackend, configure: (inout LedgerConfiguration) -> Void) throws -> some ApplicationProtocol {
        try testApplication(db, behindProxy: true, configure: configure)
    }

    func expectLimited(_ answer: Answer, retryAfter: Int = 900, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.status == .tooManyRequests, sourceLocation: sourceLocation)
        #expect(answer.string("error") == "rate_limited", sourceLocation: sourceLocation)
        #expect(answer.body["retry_after"] as? Int == retryAfter, sourceLocation: sourceLocation)
        #expect(answer.headers[.retryAfter] == String(retryAfter), sourceLocation: sourceLocation)
    }

    @Test("LEDGER_IP_SIGNUP_LIMIT sign-ups and reset requests per client: n allowed, n+1 429 before any hash or row")
    func signupLimit() async throws {
        try await MemoryBackend.with { db in
            try await app(db) {
                $0.policies.ipSignupLimit = 3
                $0.policies.ipLookupLimit = 100
            }.test(.live) { client in
                func signUp(_ email: String, from address: String) async throws -> Answer {
                    try await call(client, .post, "/auth/email/signup", ["email": email, "password": "violet-harbor-91"], from: address)
                }
                #expect(try await signUp("a1@example.com", from: "203.0.113.7").status == .created)
                #expect(try await signUp("a2@example.com", from: "203.0.113.7").status == .created)
                // A reset request counts as a sign-up.
                #expect(
                    try await call(client, .post, "/auth/password/forgot", ["email": "a1@example.com"], from: "203.0.113.7").status
                        == .accepted)
                expectLimited(try await signUp("a3@example.com", from: "203.0.113.7"))
                expectLimited(try await call(client, .post, "/auth/password/forgot", ["email": "a1@example.com"], from: "203.0.113.7"))
                // Refused before the work: no account, no reset link.
                #expect(try await db.accountCount() == 2)
                #expect(try await db.storedEventCount(type: "password.reset_requested") == 1)
                // Invalid input is not a sign-up, and another client is not affected.
                #expect(try await signUp("a3@example.com", from: "203.0.113.8").status == .created)
                // The window ends.
                db.clock.advance(by: 900)
                #expect(try await signUp("a4@example.com", from: "203.0.113.7").status == .created)
            }
        }
    }

    @Test(
        "LEDGER_IP_LOOKUP_LIMIT answers that tell whether an email or number is registered, per client: the 41st forgot-password is 429, not 404"
    )
    func lookupLimitPerClient() async throws {
        try await MemoryBackend.with { db in
            try await app(db) {
                $0.policies.ipSignupLimit = 100
                $0.policies.ipLookupLimit = 40
            }.test(.live) { client in
                var answers: [HTTPResponse.Status] = []
                for index in 0..<41 {
                    let answer = try await call(
                        client, .post, "/auth/password/forgot", ["email": "nobody\(index)@example.com"], from: "198.51.100.4")
                    answers.append(answer.status)
                    if index == 40 { expectLimited(answer) }
                }
                #expect(answers.prefix(40).allSatisfy { $0 == .notFound })
                // Sign-up's email_taken and the phone's sign-in count against the same budget.
                expectLimited(
                    try await call(
                        client, .post, "/auth/email/signup", ["email": "nobody1@example.com", "password": "violet-harbor-91"],
                        from: "198.51.100.4"))
                expectLimited(
                    try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "sign_in"], from: "198.51.100.4"))
            }
        }
    }

    @Test("an IPv6 client is one client across its /64; the next /64 is another")
    func ipv6Slash64() async throws {
        try await MemoryBackend.with { db in
            try await app(db) {
                $0.policies.ipSignupLimit = 100
                $0.policies.ipLookupLimit = 4
            }.test(.live) { client in
                func forgot(from address: String) async throws -> Answer {
                    try await call(client, .post, "/auth/password/forgot", ["email": "nobody@example.com"], from: address)
                }
                // Four hosts of one /64, each with a fresh address, are one client.
                for address in ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2:abcd::9"] {
                    #expect(try await forgot(from: address).status == .notFound)
                }
                expectLimited(try await forgot(from: "2001:db8:1:2:dead:beef:0:1"))
                #expect(try await forgot(from: "2001:db8:1:3::1").status == .notFound)
            }
        }
    }

    @Test("a signed-in account's lookups are counted per account too, whatever address it comes from")
    func lookupLimitPerAccount() async throws {
        try await MemoryBackend.with { db in
            try await app(db) {
                $0.policies.ipSignupLimit = 100
                $0.policies.ipLookupLimit = 5
            }.test(.live) { client in
                let signedUp = try await call(
                    client, .post, "/auth/email/signup", ["email": "ana@example.com", "password": "violet-harbor-91"], from: "192.0.2.1")
                let access = try #require(signedUp.string("access_token"))
                for index in 0..<5 {
                    let answer = try await call(
                        client, .get, "/auth/email-available?email=someone\(index)%40example.com", token: access,
                        from: "192.0.2.\(10 + index)")
                    #expect(answer.status == .ok && answer.body["available"] as? Bool == true)
                }
                expectLimited(
                    try await call(
                        client, .get, "/auth/email-available?email=ana%40example.com", token: access, from: "192.0.2.99"))
                // The refused checks told nothing, and the account's other lookups share the budget.
                let grant = try await call(
                    client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access, from: "192.0.2.98")
                let reauth = try #require(grant.string("reauth_token"))
                let change = try await call(
                    client, .post, "/auth/email/request-change", ["new_email": "bo@example.com"], token: access,
                    reauth: reauth, from: "192.0.2.97")
                expectLimited(change)
            }
        }
    }
}
