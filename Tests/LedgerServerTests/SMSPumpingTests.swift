import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerCore
import LedgerServer
import LedgerTestSupport
import Testing

/// SMS pumping: someone who is paid per text a service sends to numbers they control asks for
/// sign-in codes from as many addresses as they can get. Each ceiling here holds whatever the
/// per-number and per-address limits let through.
@Suite("HTTP: SMS pumping has ceilings", .timeLimit(.minutes(10)))
struct SMSPumpingTests {
    func app(_ db: MemoryBackend, configure: (inout LedgerConfiguration) -> Void) throws -> some ApplicationProtocol {
        try testApplication(db, behindProxy: true, configure: configure)
    }

    func codesQueued(_ db: MemoryBackend) async throws -> Int {
        try await db.queuedMessages(template: "otp").count
    }

    @Test("an IPv6 /48 is one budget across its 65,536 /64s (LEDGER_IP_OTP_NETWORK_LIMIT); the next /48 is another")
    func networkCeiling() async throws {
        try await MemoryBackend.with { db in
            try await app(db) { $0.policies.otp.networkLimit = 3 }.test(.live) { client in
                func ask(_ number: Int, from address: String) async throws -> Answer {
                    try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": "+99551120030\(number)", "purpose": "sign_in"], from: address)
                }
                for (number, address) in ["2001:db8:7:1::1", "2001:db8:7:2::1", "2001:db8:7:ffff::9"].enumerated() {
                    #expect(try await ask(number, from: address).status == .accepted)
                }
                let refused = try await ask(4, from: "2001:db8:7:abcd::1")
                #expect(refused.status == .tooManyRequests && refused.body["retry_after"] as? Int == 900)
                #expect(try await ask(5, from: "2001:db8:8:1::1").status == .accepted)
                // IPv4 clients have no wider network: their own limit is the one.
                for number in 6...9 { #expect(try await ask(number, from: "198.51.100.\(number)").status == .accepted) }
                #expect(try await codesQueued(db) == 8)
                db.clock.advance(by: 900)
                #expect(try await ask(4, from: "2001:db8:7:abcd::1").status == .accepted)
            }
        }
    }

    @Test(
        "sign-in codes to one country stop at LEDGER_OTP_COUNTRY_HOURLY_LIMIT, from any address; signed-in codes and other countries go on")
    func countryCeiling() async throws {
        try await MemoryBackend.with { db in
            try await app(db) { $0.policies.otp.regionLimit = 2 }.test(.live) { client in
                func ask(_ phone: String, from address: String, token: String? = nil, purpose: String = "sign_in") async throws -> Answer {
                    try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": phone, "purpose": purpose], token: token, from: address)
                }
                #expect(try await ask("+995511200301", from: "198.51.100.1").status == .accepted)
                db.clock.advance(by: 600)
                #expect(try await ask("+995511200302", from: "198.51.100.2").status == .accepted)
                let refused = try await ask("+995511200303", from: "203.0.113.3")
                #expect(refused.status == .tooManyRequests && refused.body["error"] as? String == "rate_limited")
                // Until the first of the hour's two leaves the window.
                #expect(refused.body["retry_after"] as? Int == 3000)
                // Armenia's budget is its own.
                #expect(try await ask("+37477123456", from: "203.0.113.4").status == .accepted)
                // A signed-in account adding its number is bounded per account, not by the country's budget.
                let access = try await signUp(client, email: "ana@example.com")
                let grant = try await emailLinkGrant(client, db, token: access)
                let add = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "+995511200304", "purpose": "add_phone"], token: access,
                    reauth: grant, from: "203.0.113.5")
                #expect(add.status == .accepted)
                #expect(try await codesQueued(db) == 4)
                db.clock.advance(by: 3000)
                #expect(try await ask("+995511200303", from: "203.0.113.3").status == .accepted)
            }
        }
    }

    @Test("LEDGER_SMS_COUNTRIES: a number of another country is 422 unsupported_country, and nothing is sent or looked up")
    func countryAllowlist() async throws {
        try await MemoryBackend.with { db in
            try await app(db) { $0.policies.otp.allowedRegions = ["GE"] }.test(.live) { client in
                let refused = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "+37477123456", "purpose": "sign_in"], from: "198.51.100.1")
                #expect(refused.status == .unprocessableContent)
                let problems = refused.body["errors"] as? [[String: Any]] ?? []
                #expect(
                    refused.body["error"] as? String == "unsupported_country"
                        || problems.contains { $0["code"] as? String == "unsupported_country" })
                let georgian = try await call(
                    client, .post, "/auth/phone/request-otp", ["phone": "+995511200300", "purpose": "sign_in"], from: "198.51.100.1")
                #expect(georgian.status == .accepted)
                #expect(try await codesQueued(db) == 1)
            }
        }
        #expect(throws: (any Error).self) { try LedgerConfiguration.fromEnvironment(["LEDGER_SMS_COUNTRIES": "GE,XX"]) }
        #expect(try LedgerConfiguration.fromEnvironment(["LEDGER_SMS_COUNTRIES": "ge, am"]).policies.otp.allowedRegions == ["GE", "AM"])
    }

    @Test("the /48 of a /64 limit key")
    func networkKeys() {
        #expect(IPAddress.networkLimitKey(IPAddress.limitKey("2001:db8:7:abcd::1")) == "2001:db8:7::/48")
        #expect(IPAddress.networkLimitKey(IPAddress.limitKey("2001:0db8:0000:0001::")) == "2001:db8:0::/48")
        #expect(IPAddress.networkLimitKey(IPAddress.limitKey("198.51.100.4")) == nil)
        #expect(IPAddress.networkLimitKey(IPAddress.limitKey("::ffff:198.51.100.4")) == nil)
    }
}
