import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerIdentity
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

@Suite("HTTP: holds and the deletion preflight", .timeLimit(.minutes(10)))
struct HoldsEndpointTests {
    @Test("holds are idempotent per ref; the preflight lists them in the product's priority order")
    func holdsAndPreflight() async throws {
        try await MemoryBackend.with { db in
            let writer = try await db.apiKeys.create(name: "bookings", scopes: [.holdsWrite]).key
            let reader = try await db.apiKeys.create(name: "audit", scopes: [.auditRead]).key
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                func put(_ ref: String, _ body: [String: Any], key: String? = nil) async throws -> Answer {
                    try await call(
                        client, .put, "/accounts/\(accountID)/holds/\(ref)", body, token: key ?? writer,
                        path: "/accounts/{id}/holds/{ref}")
                }
                #expect(try await call(client, .get, "/me/delete-preflight", token: access).body["blockers"] as? [Any] != nil)
                #expect(try await put("p1", ["kind": "pending_payout", "amount": ["currency": "EUR", "minor": 24550]]).status == .ok)
                #expect(
                    try await put(
                        "p2",
                        ["kind": "pending_payout", "amount": ["currency": "EUR", "minor": 7500], "releases_at": "2026-09-22T08:00:00Z"]
                    ).status == .ok)
                #expect(try await put("d1", ["kind": "dispute", "title": "Chargeback"]).status == .ok)
                let second = ["kind": "upcoming_session", "starts_at": "2026-09-29T18:30:00Z", "title": "Group · Tennis (4 athletes)"]
                let first = try await put("s2", second)
                #expect(first.status == .ok && first.string("ref") == "s2" && first.string("account_id") == accountID)
                #expect(
                    try await put("s1", ["kind": "upcoming_session", "starts_at": "2026-09-28T10:00:00Z", "title": "Padel with Anna M."])
                        .status == .ok)
                #expect(
                    try await put(
                        "b1", ["kind": "upcoming_booking", "starts_at": "2026-09-28T10:00:00Z", "title": "Padel with Coach Maria"]
                    ).status == .ok)
                // The same hold again appends nothing.
                let before = try await db.storedEventCount(type: "hold.placed")
                #expect(try await put("s2", second).status == .ok)
                #expect(try await db.storedEventCount(type: "hold.placed") == before)

                let preflight = try await call(client, .get, "/me/delete-preflight", token: access)
                let blockers = try #require(preflight.body["blockers"] as? [[String: Any]])
                #expect(
                    blockers.compactMap { $0["kind"] as? String } == ["upcoming_session", "upcoming_booking", "pending_payout", "dispute"])
                #expect(blockers[0]["count"] as? Int == 2)
                #expect((blockers[0]["items"] as? [[String: Any]])?.compactMap { $0["ref"] as? String } == ["s1", "s2"])
                #expect((blockers[2]["total"] as? [String: Any])?["minor"] as? Int == 32050)

                #expect(
                    try await call(client, .delete, "/accounts/\(accountID)/holds/s1", token: writer, path: "/accounts/{id}/holds/{ref}")
                        .status == .noContent)
                #expect(
                    try await call(client, .delete, "/accounts/\(accountID)/holds/s1", token: writer, path: "/accounts/{id}/holds/{ref}")
                        .status == .noContent)
                let fewer = try await call(client, .get, "/me/delete-preflight", token: access)
                #expect(((fewer.body["blockers"] as? [[String: Any]])?.first?["count"] as? Int) == 1)

                // Keys and input.
                #expect(try await put("x", ["kind": "dispute"], key: reader).status == .forbidden)
                #expect(try await put("x", ["kind": "dispute"], key: "lk_wrong").status == .unauthorized)
                #expect(try await put("x", ["kind": "party"]).status == .unprocessableContent)
                #expect(try await put("x", ["kind": "dispute", "starts_at": "tomorrow"]).status == .unprocessableContent)
                // An explicit null is the same as leaving the field out (openapi.yaml allows both).
                let nulls = try await put(
                    "n1", ["kind": "dispute", "starts_at": NSNull(), "title": NSNull(), "amount": NSNull(), "releases_at": NSNull()])
                #expect(nulls.status == .ok && nulls.body["title"] is NSNull && nulls.body["releases_at"] is NSNull)
                let unknown = try await call(
                    client, .put, "/accounts/\(UUID())/holds/x", ["kind": "dispute"], token: writer, path: "/accounts/{id}/holds/{ref}")
                #expect(unknown.status == .notFound)
            }
        }
    }

    @Test("a hold belongs to the key that placed it: another holds:write key can neither release nor overwrite it (404); an admin key can")
    func holdOwnership() async throws {
        try await MemoryBackend.with { db in
            let bookings = try await db.apiKeys.create(name: "bookings", scopes: [.holdsWrite])
            let payouts = try await db.apiKeys.create(name: "payouts", scopes: [.holdsWrite])
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let path = "/accounts/{id}/holds/{ref}"
                let hold = "/accounts/\(accountID)/holds/b1"
                #expect(try await call(client, .put, hold, ["kind": "upcoming_booking"], token: bookings.key, path: path).status == .ok)
                let release = try await call(client, .delete, hold, token: payouts.key, path: path)
                #expect(release.status == .notFound)
                #expect(release.string("error") == "not_found")
                let overwrite = try await call(client, .put, hold, ["kind": "dispute"], token: payouts.key, path: path)
                #expect(overwrite.status == .notFound)
                let blockers = try await call(client, .get, "/me/delete-preflight", token: access).body["blockers"] as? [[String: Any]]
                #expect(blockers?.compactMap { $0["kind"] as? String } == ["upcoming_booking"])
                // Its own key releases it; the events name that key.
                #expect(try await call(client, .delete, hold, token: bookings.key, path: path).status == .noContent)
                let keyIDs = try await db.history(of: try #require(UUID(uuidString: accountID))).compactMap {
                    event -> String? in
                    guard event.type.hasPrefix("hold."), let payload = event.payload,
                        let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
                    else { return nil }
                    return object["key_id"] as? String
                }
                #expect(keyIDs == [bookings.id.lowercased, bookings.id.lowercased])
                // That their metadata names it as the actor: AuditTrailTests.holdActors.
                // A revoked key's hold would block the deletion for ever: an administrator's key
                // (and only one) clears it.
                let stale = "/accounts/\(accountID)/holds/p9"
                #expect(try await call(client, .put, stale, ["kind": "pending_payout"], token: payouts.key, path: path).status == .ok)
                _ = try await db.apiKeys.revoke(payouts.id)
                #expect(try await call(client, .delete, stale, token: bookings.key, path: path).status == .notFound)
                let root = try await db.apiKeys.create(name: "root", scopes: [.admin])
                #expect(try await call(client, .delete, stale, token: root.key, path: path).status == .noContent)
                let cleared = try await call(client, .get, "/me/delete-preflight", token: access).body["blockers"] as? [Any]
                #expect(cleared?.isEmpty == true)
            }
        }
    }

    @Test(
        "a reference over 200 characters is 422 invalid_ref for placing and for releasing (found by scripts/fuzz.sh); a 422 lists every rule broken"
    )
    func overlongRef() async throws {
        try await MemoryBackend.with { db in
            let writer = try await db.apiKeys.create(name: "bookings", scopes: [.holdsWrite]).key
            try await testApplication(db).test(.router) { client in
                let uri = "/accounts/\(UUID())/holds/\(String(repeating: "0", count: 201))"
                let placed = try await call(client, .put, uri, ["kind": "dispute"], token: writer, path: "/accounts/{id}/holds/{ref}")
                #expect(placed.status == .unprocessableContent && placed.problemCodes == ["invalid_ref"])
                let released = try await call(client, .delete, uri, token: writer, path: "/accounts/{id}/holds/{ref}")
                #expect(released.status == .unprocessableContent && released.problemCodes == ["invalid_ref"])
                let everything = try await call(
                    client, .put, uri,
                    [
                        "kind": "favour", "amount": ["currency": "euro", "minor": Int64.max], "starts_at": "tomorrow",
                        "releases_at": "2026-13-01",
                    ], token: writer, path: "/accounts/{id}/holds/{ref}")
                #expect(
                    everything.problemCodes == [
                        "invalid_ref", "invalid_kind", "invalid_currency", "invalid_amount", "invalid_date", "invalid_date",
                    ])
                #expect(
                    (everything.body["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String }.suffix(2) == [
                        "starts_at", "releases_at",
                    ])
            }
        }
    }

    @Test("amounts beyond ±10^15 minor units are 422 invalid_amount and change nothing; the largest allowed ones sum without trapping")
    func amountBounds() async throws {
        try await MemoryBackend.with { db in
            let writer = try await db.apiKeys.create(name: "payouts", scopes: [.holdsWrite]).key
            try await testApplication(db).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                func put(_ ref: String, minor: Int64) async throws -> Answer {
                    try await call(
                        client, .put, "/accounts/\(accountID)/holds/\(ref)",
                        ["kind": "pending_payout", "amount": ["currency": "EUR", "minor": minor]], token: writer,
                        path: "/accounts/{id}/holds/{ref}")
                }
                for minor in [Money.maximumMinorUnits + 1, -Money.maximumMinorUnits - 1, Int64.max, Int64.min] {
                    let refused = try await put("big", minor: minor)
                    #expect(refused.status == .unprocessableContent && refused.problemCodes == ["invalid_amount"])
                }
                #expect(try await db.storedEventCount(type: "hold.placed") == 0)
                #expect(try await put("a", minor: Money.maximumMinorUnits).status == .ok)
                #expect(try await put("b", minor: Money.maximumMinorUnits).status == .ok)
                let preflight = try await call(client, .get, "/me/delete-preflight", token: access)
                let payouts = try #require((preflight.body["blockers"] as? [[String: Any]])?.first)
                #expect((payouts["total"] as? [String: Any])?["minor"] as? Int == 2 * Int(Money.maximumMinorUnits))
            }
        }
        // Totals that would not fit are left out rather than trapping.
        let huge = Money(currency: "EUR", minor: .max)
        #expect(Money.total([huge, huge]) == nil)
        #expect(Money.total([Money(currency: "EUR", minor: 1), Money(currency: "USD", minor: 1)]) == nil)
        #expect(Money.total([Money(currency: "EUR", minor: 2), Money(currency: "EUR", minor: -1)]) == Money(currency: "EUR", minor: 1))
    }
}
