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
import LedgerWebAuthnTesting
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

// MARK: - Passkeys

extension RaceTests {
    @Test("eight concurrent sign-ins with one answer: exactly one session")
    func concurrentReplay() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApplication(db, configure: PasskeyEndpointTests.relyingParty).test(.router) { client in
                let passkeys = PasskeyEndpointTests()
                let (access, grant) = try await passkeys.account(client, db)
                let authenticator = SoftAuthenticator()
                let (credential, _) = try await passkeys.register(client, authenticator, token: access, grant: grant)
                let options = try await call(client, .post, "/auth/passkey/options")
                let assertion = authenticator.getAssertion(credential: credential, challenge: try PasskeyEndpointTests.challenge(options))
                let bytes = assertion.jsonBytes()
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for _ in 0..<8 {
                        group.addTask {
                            try await call(client, .post, "/auth/passkey/login", ["credential": try PasskeyEndpointTests.object(bytes)])
                                .status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .ok }.count == 1 && statuses.filter { $0 == .unauthorized }.count == 7)
            }
        }
    }

    @Test("another account registering the same credential id is 409 passkey_exists, also when both race")
    func credentialAcrossAccounts() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApplication(db, configure: PasskeyEndpointTests.relyingParty).test(.router) { client in
                let passkeys = PasskeyEndpointTests()
                let ana = try await passkeys.account(client, db, email: "ana@example.com")
                let bo = try await passkeys.account(client, db, email: "bo@example.com")
                let authenticator = SoftAuthenticator()
                let shared = Array(repeating: UInt8(7), count: 32)
                var bodies: [(access: String, grant: String, bytes: [UInt8])] = []
                for (access, grant) in [ana, bo] {
                    let options = try await call(client, .post, "/me/passkeys/options", token: access, reauth: grant)
                    let made = authenticator.makeCredential(
                        rpID: PasskeyEndpointTests.rpID, origin: PasskeyEndpointTests.origin,
                        challenge: try PasskeyEndpointTests.challenge(options), userHandle: try PasskeyEndpointTests.userHandle(options),
                        credentialID: shared)
                    bodies.append((access, grant, made.response.jsonBytes()))
                }
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for body in bodies {
                        group.addTask {
                            try await call(
                                client, .post, "/me/passkeys", ["credential": try PasskeyEndpointTests.object(body.bytes)],
                                token: body.access, reauth: body.grant
                            ).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.sorted { $0.code < $1.code } == [.created, .conflict])
                #expect(try await db.client.query("SELECT count(*) FROM passkey_credentials")[0].int(0) == 1)
            }
        }
    }
}
