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

/// Races between requests that each hold their own database connection, and state that
/// instances share through the database: a row lock, a unique index or a conditional write
/// decides them, so they run on PostgreSQL (the in-memory repositories serialize every command
/// and would let them pass without those guards). What each endpoint does alone is tested on
/// memory in its area's suite.
@Suite("PostgreSQL: races and instances sharing one database", .timeLimit(.minutes(10)))
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

    /// Two instances (own pools, own services) on one database, one clock.
    @Test("5 failures across two instances lock the 6th attempt out with 429 until the lockout ends")
    func throttleSharedAcrossInstances() async throws {
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
                    try await ThrottleTests.lockout(a, b, clock: db.clock)
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

    @Test("two concurrent verifications of one code: exactly one succeeds")
    func phoneCodeVerificationRace() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApp(db).test(.router) { client in
                let requestID = try await requestOTP(client, "+995511200300")
                let code = try await otpCode(db, phone: "+995511200300")
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for _ in 0..<8 { group.addTask { try await verifyOTP(client, requestID, code).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .ok }.count == 1)
                #expect(statuses.filter { $0 == .gone }.count == 7)
                let sessions = try await db.client.query("SELECT count(*) FROM sessions")
                #expect(try sessions[0].int(0) == 1)
            }
        }
    }
}
