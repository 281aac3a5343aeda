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

// MARK: - Passkeys

extension RaceTests {
    @Test("twelve support searches at once against a limit of five: exactly five looked up, across two instances")
    func supportSearchesCountedAtomically() async throws {
        try await TestPostgres.withDatabase { db in
            let secondClient = PostgresClient(configuration: .init(url: db.url, maximumConnections: 4))
            defer { Task { await secondClient.shutdown() } }
            let limit: @Sendable (inout LedgerConfiguration) -> Void = { $0.policies.supportReadLimit = 5 }
            let servicesA = try makeServices(url: db.url, client: db.client, clock: db.clock, masterKey: db.masterKey, configure: limit)
            let servicesB = try makeServices(url: db.url, client: secondClient, clock: db.clock, masterKey: db.masterKey, configure: limit)
            let key = try await servicesA.apiKeys.create(name: "desk", scopes: [.accountsSupport]).key
            try await Application(router: buildRouter(servicesA)).test(.router) { a in
                try await Application(router: buildRouter(servicesB)).test(.router) { b in
                    let access = try await signUp(a, email: "ana@example.com")
                    let accountID = try #require(try await call(a, .get, "/me", token: access).string("account_id"))
                    let headers: HTTPFields = [HTTPField.Name("X-Ledger-Operator")!: "Nino"]
                    let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                        for index in 0..<12 {
                            let client: any TestClientProtocol = index.isMultiple(of: 2) ? a : b
                            group.addTask {
                                try await call(
                                    client, .get, "/admin/accounts?email=ana@example.com", token: key, path: "/admin/accounts",
                                    headers: headers
                                ).status
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(statuses.filter { $0 == .ok }.count == 5 && statuses.filter { $0 == .tooManyRequests }.count == 7)
                    let views = try await db.client.query(
                        "SELECT count(*) FROM events WHERE event_type = 'admin.viewed' AND stream_id = $1",
                        [.uuid(try #require(UUID(uuidString: accountID)))])
                    #expect(try views[0].int(0) == 5)
                }
            }
        }
    }

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

// MARK: - Two-factor authentication

extension RaceTests {
    @Test("wrong codes racing past the day's limit tell the owner once; a session's re-auths reaching its own day tell them too")
    func limitAlertOnceUnderRace() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApplication(db, configure: TwoFactorEndpointTests.fiveADay).test(.router) { client in
                let twoFactor = TwoFactorEndpointTests()
                let (access, secret) = try await twoFactor.signUpWithTOTP(client, db, email: "gil@example.com")
                db.clock.advance(by: 30)
                let login = ["email": "gil@example.com", "password": "violet-harbor-91"]
                var tokens: [String] = []
                for _ in 0..<3 { tokens.append(try twoFactor.mfaToken(try await call(client, .post, "/auth/email/login", login))) }
                let wrong = try twoFactor.code(secret, db, steps: 7)
                // Twelve wrong codes at once over three challenges: five are admitted, one of them spends the day.
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for index in 0..<12 {
                        let token = tokens[index % 3]
                        group.addTask { try await twoFactor.verify(client, token, code: wrong).status }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .unauthorized || $0 == .gone }.count == 5)
                #expect(statuses.filter { $0 == .tooManyRequests }.count == 7)
                #expect(try await twoFactor.limitAlerts(db).map { $0["during"] } == ["sign_in"])
                #expect(try await TwoFactorEndpointTests.limitEvents(db) == 1)
                // Later refusals do not tell the owner again.
                let refused = try await twoFactor.verify(
                    client, try twoFactor.mfaToken(try await call(client, .post, "/auth/email/login", login)), code: wrong)
                #expect(refused.status == .tooManyRequests)
                #expect(try await twoFactor.limitAlerts(db).count == 1)

                // A session guessing re-auth codes spends its own day, and that tells the owner too.
                for _ in 0..<5 {
                    #expect(try await call(client, .post, "/auth/reauth/totp", ["code": wrong], token: access).status == .unauthorized)
                }
                #expect(try await twoFactor.limitAlerts(db).map { $0["during"] } == ["sign_in", "reauth"])
                #expect(try await TwoFactorEndpointTests.limitEvents(db) == 2)

                // Without two-factor, wrong TOTP re-auths guess nothing: they are capped all the
                // same, and tell no one (else a session holder could fill the owner's mailbox).
                let plain = try await signUp(client, email: "hal@example.com")
                _ = try await emailLinkGrant(client, db, token: plain)  // verifies the address
                for _ in 0..<5 {
                    #expect(try await call(client, .post, "/auth/reauth/totp", ["code": wrong], token: plain).status == .unauthorized)
                }
                #expect(try await call(client, .post, "/auth/reauth/totp", ["code": wrong], token: plain).status == .tooManyRequests)
                #expect(try await twoFactor.limitAlerts(db).count == 2)
                #expect(try await TwoFactorEndpointTests.limitEvents(db) == 2)
            }
        }
    }

    @Test("the day's last attempt tells the owner even when it fails another way: its challenge expired while it was counted")
    func limitAlertWhenTheChallengeEnds() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApplication(db, configure: TwoFactorEndpointTests.fiveADay).test(.router) { client in
                let twoFactor = TwoFactorEndpointTests()
                let (access, secret) = try await twoFactor.signUpWithTOTP(client, db, email: "ivy@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                db.clock.advance(by: 30)
                let login = ["email": "ivy@example.com", "password": "violet-harbor-91"]
                let wrong = try twoFactor.code(secret, db, steps: 7)
                let first = try twoFactor.mfaToken(try await call(client, .post, "/auth/email/login", login))
                for _ in 0..<4 { #expect(try await twoFactor.verify(client, first, code: wrong).status == .unauthorized) }

                // The day's fifth code passes the challenge's first look, then waits to be counted
                // (the day's counter row is locked) while its challenge's 5 minutes run out.
                let second = try twoFactor.mfaToken(try await call(client, .post, "/auth/email/login", login))
                let holding = AsyncStream<Void>.makeStream()
                let release = AsyncStream<Void>.makeStream()
                let holder = Task {
                    try await db.client.transaction { connection in
                        _ = try await connection.query(
                            "SELECT 1 FROM login_throttle WHERE key = $1 FOR UPDATE", [.text("mfa:" + accountID)])
                        holding.continuation.yield()
                        for await _ in release.stream { return }
                    }
                }
                for await _ in holding.stream { break }
                let fifth = Task { try await twoFactor.verify(client, second, code: wrong).status }
                try await db.waitForLockWaits(1)
                db.clock.advance(by: 301)
                release.continuation.yield()
                try await holder.value
                #expect(try await fifth.value == .gone)
                // Counted, and refused for the challenge's time, it still spends the day and tells the owner.
                #expect(try await twoFactor.limitAlerts(db).map { $0["during"] } == ["sign_in"])
                let third = try twoFactor.mfaToken(try await call(client, .post, "/auth/email/login", login))
                #expect(try await twoFactor.verify(client, third, code: try twoFactor.code(secret, db)).status == .tooManyRequests)
            }
        }
    }
}

// MARK: - Recovery after a takeover

extension RaceTests {
    @Test("two racing reverts of one link: exactly one undoes the change, the other is 410")
    func revertRace() async throws {
        try await TestPostgres.withDatabase { db in
            try await testApplication(db).test(.router) { client in
                let access = try await RecoveryTests().owner(client, db)
                let grant = try await passwordGrant(client, token: access)
                #expect(
                    try await call(
                        client, .post, "/auth/email/request-change", ["new_email": "eve@example.com"], token: access, reauth: grant
                    )
                    .status == .accepted)
                let confirm = try #require(try await outboxMessage(db, template: "email_change_confirm").token)
                #expect(try await call(client, .post, "/auth/email/confirm-change", ["token": confirm]).status == .ok)
                let revert = try #require(try await outboxMessage(db, template: "email_changed_notice").token)
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for index in 0..<8 {
                        group.addTask {
                            try await call(
                                client, .post, "/auth/email/revert", ["token": revert, "new_password": "amber-orchard-5\(index)"]
                            ).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == .ok }.count == 1 && statuses.filter { $0 == .gone }.count == 7)
                let reverted = try await db.storedEventCount(type: "email.reverted")
                #expect(reverted == 1)
            }
        }
    }
}

// MARK: - Phone codes

extension RaceTests {
    /// Two instances (own pools, own services) on one database and one clock, each trusting the
    /// loopback as a proxy, so a request names its client with `X-Forwarded-For`; `body` gets
    /// their clients.
    func twoInstances(
        _ db: TestDatabase, configure: @escaping @Sendable (inout LedgerConfiguration) -> Void,
        _ body: @escaping @Sendable ([any TestClientProtocol]) async throws -> Void
    ) async throws {
        let second = PostgresClient(configuration: .init(url: db.url, maximumConnections: 4))
        func app(_ client: PostgresClient) throws -> some ApplicationProtocol {
            Application(
                router: buildRouter(
                    try makeServices(url: db.url, client: client, clock: db.clock, masterKey: db.masterKey) {
                        $0.trustedProxies = ["127.0.0.1/32", "::1/128"]
                        configure(&$0)
                    }))
        }
        let first = try app(db.client)
        let other = try app(second)
        do {
            try await first.test(.live) { a in try await other.test(.live) { b in try await body([a, b]) } }
        } catch {
            await second.shutdown()
            throw error
        }
        await second.shutdown()
    }

    @Test(
        "two instances share the send limits, each read under the database's lock: a number's countdown, an address's, a /48's, an account's, a country's"
    )
    func sendLimitsAcrossInstances() async throws {
        try await TestPostgres.withDatabase { db in
            let limits: @Sendable (inout LedgerConfiguration) -> Void = {
                $0.policies.otp.addressLimit = 3
                $0.policies.otp.networkLimit = 3
                $0.policies.otp.accountLimit = 2
                $0.policies.otp.regionLimit = 0
            }
            try await twoInstances(db, configure: limits) { instances in
                func ask(_ turn: Int, _ phone: String, from address: String) async throws -> HTTPResponse.Status {
                    let client = instances[turn % 2]
                    return try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": phone, "purpose": "sign_in"], from: address
                    ).status
                }
                // The number's countdown: the other instance refuses a resend within 30 s.
                #expect(try await ask(0, "+995511200300", from: "198.51.100.1") == .accepted)
                #expect(try await ask(1, "+995511200300", from: "198.51.100.2") == .tooManyRequests)
                // The address's: three codes from one address, to three numbers, then 429.
                for turn in 1...2 { #expect(try await ask(turn, "+99551120030\(turn)", from: "198.51.100.1") == .accepted) }
                #expect(try await ask(1, "+995511200309", from: "198.51.100.1") == .tooManyRequests)
                // The /48's: three /64s of one /48, then 429 for a fourth.
                for (turn, address) in ["2001:db8:7:1::1", "2001:db8:7:2::1", "2001:db8:7:3::1"].enumerated() {
                    #expect(try await ask(turn, "+99551120040\(turn)", from: address) == .accepted)
                }
                #expect(try await ask(1, "+995511200409", from: "2001:db8:7:4::1") == .tooManyRequests)
                // The account's: a signed-in account adding a number, two codes, then 429.
                let access = try await signUp(instances[0], email: "ana@example.com")
                let grant = try await emailLinkGrant(instances[0], db, token: access)
                for (turn, phone) in ["+995511200500", "+995511200501", "+995511200502"].enumerated() {
                    let client = instances[turn % 2]
                    let answer = try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": phone, "purpose": "add_phone"], token: access,
                        reauth: grant, from: "203.0.113.\(turn + 1)")
                    #expect(answer.status == (turn < 2 ? .accepted : .tooManyRequests))
                }
            }
            try await twoInstances(db, configure: { $0.policies.otp.regionLimit = 2 }) { instances in
                // The country's: Armenia's sign-in codes, from any address, through either instance.
                for (turn, phone) in ["+37477123450", "+37477123451", "+37477123452"].enumerated() {
                    let client = instances[turn % 2]
                    let answer = try await call(
                        client, .post, "/auth/phone/request-otp", ["phone": phone, "purpose": "sign_in"],
                        from: "192.0.2.\(turn + 1)")
                    #expect(answer.status == (turn < 2 ? .accepted : .tooManyRequests))
                }
            }
        }
    }

    @Test("wrong codes racing over two open codes of one number count once each: the day's cap holds across requests")
    func dailyCapAcrossRequests() async throws {
        try await TestPostgres.withDatabase { db in
            try await twoInstances(db, configure: { $0.policies.otp.dailyFailureLimit = 4 }) { instances in
                let phone = "+995511200300"
                // Two open codes of the number: a sign-in's, and another account adding it.
                let signIn = try await requestOTP(instances[0], phone)
                let signInCode = try await otpCode(db, phone: phone)
                let access = try await signUp(instances[1], email: "ana@example.com")
                let grant = try await emailLinkGrant(instances[1], db, token: access)
                let adding = try await requestOTP(instances[1], phone, purpose: "add_phone", token: access, reauth: grant)
                let addingCode = try await otpCode(db, phone: phone)
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for turn in 0..<16 {
                        group.addTask {
                            turn % 2 == 0
                                ? try await verifyOTP(instances[0], signIn, wrongCode(signInCode)).status
                                : try await verifyOTP(instances[1], adding, wrongCode(addingCode), token: access, reauth: grant).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                // Four wrong codes are compared and counted; the other twelve find the day's cap.
                #expect(statuses.count { $0 == .unauthorized } == 4, "\(statuses)")
                #expect(statuses.count { $0 == .tooManyRequests } == 12, "\(statuses)")
                #expect(try await db.client.query("SELECT sum(failed_attempts) FROM otp_requests")[0].int(0) == 4)
            }
        }
    }
}
