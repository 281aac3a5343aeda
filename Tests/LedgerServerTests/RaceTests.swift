import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerCore
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import NIOCore
import Testing

/// Races between requests that each hold their own database connection: a row lock, a unique
/// index or a conditional write decides them, so they run on PostgreSQL (the in-memory
/// repositories serialize every command and would let them pass without those guards). What
/// each endpoint does alone is tested on memory in its area's suite.
@Suite("PostgreSQL: races between concurrent requests", .timeLimit(.minutes(10)))
struct RaceTests {
    @Test("a hold racing a deletion either blocks it or is refused with 410: never lost in between")
    func holdRace() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey)
            let writer = try await services.apiKeys.create(name: "bookings", scopes: [.holdsWrite]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                var outcomes: Set<String> = []
                for round in 0..<8 {
                    let access = try await signUp(client, email: "user\(round)@example.com")
                    let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                    let reauth = try #require(
                        try await call(client, .post, "/auth/reauth/password", ["password": "violet-harbor-91"], token: access).string(
                            "reauth_token"))
                    async let hold = call(
                        client, .put, "/accounts/\(accountID)/holds/b\(round)", ["kind": "upcoming_booking"], token: writer,
                        path: "/accounts/{id}/holds/{ref}")
                    async let deletion = call(client, .delete, "/me", token: access, reauth: reauth)
                    let (holdStatus, deletionStatus) = try await (hold.status, deletion.status)
                    #expect(
                        (holdStatus == .ok && deletionStatus == .conflict) || (holdStatus == .gone && deletionStatus == .accepted),
                        "round \(round): hold \(holdStatus), deletion \(deletionStatus)")
                    outcomes.insert("\(holdStatus.code)/\(deletionStatus.code)")
                }
                #expect(outcomes.isSubset(of: ["200/409", "410/202"]))
            }
        }
    }
}
