import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerTestSupport
import Testing

extension TestDatabase {
    /// The account service on this database, with a cheap scrypt cost.
    func accountService(logN: Int = 4) throws -> AccountService {
        AccountService(environment: try accountsEnvironment(eventStore(), logN: logN))
    }
}

@Suite("Accounts: sign-up, sign-in, sessions", .timeLimit(.minutes(10)))
struct AccountServiceTests {
    @Test("support finds an account by the public user id the support prefill shows (AccountDirectory)")
    func directoryFindsPublicID() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let session = try await service.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: "ios")
            _ = try await service.signUp(
                email: "bo@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: "ios")
            let userID = PublicUserID(accountID: session.accountID)
            let found = try await AccountDirectory.accounts(with: try #require(PublicUserID(userID.description)), client: db.client)
            #expect(found.map(\.accountID) == [session.accountID])
        }
    }

    @Test("sign-up creates the account, its projections and a working session")
    func signUp() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let session = try await service.signUp(
                email: " Ana@Example.com ", password: "violet-harbor-91", displayName: "Ana", handle: nil, device: "ios")
            #expect(!session.emailVerified)
            #expect(session.expiresIn == 900)
            #expect(session.accessToken.hasPrefix("la_") && session.refreshToken.hasPrefix("lr_"))
            let authenticated = try await service.authenticate(accessToken: session.accessToken)
            #expect(authenticated == SessionRef(accountID: session.accountID, sessionID: session.sessionID))
            let state = try await service.account(session.accountID)
            #expect(state.email == "Ana@Example.com")
            #expect(state.handleIsTemporary)
            #expect(Handle(state.handle ?? "") != nil)
            let row = try await db.client.query(
                "SELECT email_normalized, handle_is_temporary FROM accounts WHERE account_id = $1", [.uuid(session.accountID)])[0]
            #expect(row.string(0) == "ana@example.com")
            // Nothing secret reaches the database in the clear.
            let leaks = try await db.client.query(
                """
                SELECT count(*) FROM events WHERE position(convert_to($1, 'UTF8') IN payload) > 0
                   OR position(convert_to($2, 'UTF8') IN payload) > 0
                """, [.text("violet-harbor-91"), .text(session.accessToken)])
            #expect(try leaks[0].int(0) == 0)
            #expect(try await db.eventStore().verify(streamID: session.accountID).ok)
        }
    }

    @Test("sign-up reports every broken rule at once")
    func validation() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let failure = await #expect(throws: AccountService.ValidationFailure.self) {
                try await service.signUp(email: "not-an-email", password: "1234567", displayName: nil, handle: "x!", device: nil)
            }
            #expect(failure?.problems.map(\.code) == ["invalid_email", "too_short", "too_common", "all_digits", "invalid_handle"])
            #expect(failure?.problems[1].message == "Password must be at least 8 characters.")
            #expect(try await db.client.query("SELECT count(*) FROM events")[0].int(0) == 0)
        }
    }

    @Test("two racing sign-ups with one email (any case): exactly one wins")
    func signUpRace() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let outcomes = await withTaskGroup(of: String.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        do {
                            _ = try await service.signUp(
                                email: index % 2 == 0 ? "race@example.com" : "RACE@example.com", password: "violet-harbor-91",
                                displayName: nil, handle: nil, device: nil)
                            return "won"
                        } catch let taken as ClaimTaken {
                            return taken.claim == .email ? "taken" : "other"
                        } catch {
                            return "error: \(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == "won" }.count == 1)
            #expect(outcomes.filter { $0 == "taken" }.count == 5)
            #expect(try await db.client.query("SELECT count(*) FROM accounts")[0].int(0) == 1)
            #expect(try await db.client.query("SELECT count(DISTINCT stream_id) FROM events")[0].int(0) == 1)
        }
    }

    @Test("racing sign-ups for one handle, differently cased: exactly one wins")
    func handleRace() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<4 {
                    group.addTask {
                        (try? await service.signUp(
                            email: "h\(index)@example.com", password: "violet-harbor-91", displayName: nil,
                            handle: index % 2 == 0 ? "Handz" : "handz", device: nil)) != nil
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
        }
    }

    @Test("sign-in: right password, wrong password, unknown email")
    func signIn() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let created = try await service.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let session = try await service.signIn(email: "ANA@example.com", password: "violet-harbor-91", device: "android")
            #expect(session.accountID == created.accountID)
            #expect(session.sessionID != created.sessionID)
            for (email, password) in [("ana@example.com", "wrong-password-1"), ("nobody@example.com", "violet-harbor-91"), ("junk", "x")] {
                let error = await #expect(throws: IdentityError.self) {
                    try await service.signIn(email: email, password: password, device: nil)
                }
                #expect(error == IdentityError.invalidCredentials)
                #expect(error?.message == "Incorrect email or password.")
            }
        }
    }

    @Test("a changed scrypt cost rehashes at the next sign-in")
    func rehash() async throws {
        try await TestPostgres.withDatabase { db in
            let created = try await db.accountService(logN: 4).signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let stronger = try db.accountService(logN: 5)
            _ = try await stronger.signIn(email: "ana@example.com", password: "violet-harbor-91", device: nil)
            let state = try await stronger.account(created.accountID)
            #expect(state.passwordHash?.hasPrefix("$scrypt$ln=5,") == true)
            _ = try await stronger.signIn(email: "ana@example.com", password: "violet-harbor-91", device: nil)
        }
    }

    @Test("a refresh writes only the hash it spends, however long the session; the oldest spent one still revokes it")
    func refreshWritesOneSpentHash() async throws {
        try await TestPostgres.withDatabase { db in
            // Counts every row offered to the table, those that ON CONFLICT then skips included.
            try await db.client.query("CREATE TABLE offered (n int NOT NULL)")
            try await db.client.query("INSERT INTO offered VALUES (0)")
            try await db.client.query(
                """
                CREATE FUNCTION count_offered() RETURNS trigger LANGUAGE plpgsql AS
                $$ BEGIN UPDATE offered SET n = n + 1; RETURN NEW; END $$
                """)
            try await db.client.query(
                "CREATE TRIGGER count_offered BEFORE INSERT ON spent_refresh_tokens FOR EACH ROW EXECUTE FUNCTION count_offered()")
            let service = try db.accountService()
            let first = try await service.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            var current = try await service.refresh(first.refreshToken)
            let sizeAfterOne = try await Self.encodedSize(service.account(first.accountID))
            for _ in 1..<20 { current = try await service.refresh(current.refreshToken) }
            // The state (and so every load and snapshot of it) does not grow with refreshes.
            #expect(try await Self.encodedSize(service.account(first.accountID)) == sizeAfterOne)
            #expect(try await db.client.query("SELECT n FROM offered")[0].int(0) == 20)
            #expect(try await db.client.query("SELECT count(*) FROM spent_refresh_tokens")[0].int(0) == 20)
            let reuse = await #expect(throws: IdentityError.self) { try await service.refresh(first.refreshToken) }
            #expect(reuse == IdentityError.sessionExpired(lastMethod: "email"))
            #expect(try await service.authenticate(accessToken: current.accessToken) == nil)
        }
    }

    static func encodedSize(_ state: AccountState) -> Int {
        var writer = ByteWriter()
        writer.write(state)
        return writer.bytes.count
    }

    @Test("many concurrent refreshes of one token: one gets the new pair, the rest revoke the session")
    func concurrentRefresh() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let first = try await service.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let outcomes = await withTaskGroup(of: AccountService.Session?.self) { group in
                for _ in 0..<12 { group.addTask { try? await service.refresh(first.refreshToken) } }
                return await group.reduce(into: [AccountService.Session?]()) { $0.append($1) }
            }
            let winners = outcomes.compactMap { $0 }
            #expect(winners.count == 1)
            // The copies that lost were spent tokens presented again: the session ends.
            if let winner = winners.first {
                #expect(try await service.authenticate(accessToken: winner.accessToken) == nil)
                await #expect(throws: IdentityError.self) { try await service.refresh(winner.refreshToken) }
            }
            let state = try await service.account(first.accountID)
            #expect(state.sessions[first.sessionID]?.revokedReason == "refresh_token_reused")
            #expect(try await db.client.query("SELECT count(*) FROM spent_refresh_tokens")[0].int(0) == 1)
        }
    }

    @Test("refresh rotates tokens; a reused refresh token revokes the session")
    func refreshAndReuse() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let first = try await service.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let second = try await service.refresh(first.refreshToken)
            #expect(second.sessionID == first.sessionID)
            #expect(second.accessToken != first.accessToken)
            #expect(try await service.authenticate(accessToken: first.accessToken) == nil)
            #expect(try await service.authenticate(accessToken: second.accessToken) != nil)

            let reuse = await #expect(throws: IdentityError.self) { try await service.refresh(first.refreshToken) }
            #expect(reuse == IdentityError.sessionExpired(lastMethod: "email"))
            #expect(try await service.authenticate(accessToken: second.accessToken) == nil)
            await #expect(throws: IdentityError.self) { try await service.refresh(second.refreshToken) }
            await #expect(throws: IdentityError.self) { try await service.refresh("lr_unknown") }
        }
    }

    @Test("access tokens expire; logout revokes only its session")
    func expiryAndLogout() async throws {
        try await TestPostgres.withDatabase { db in
            let service = try db.accountService()
            let first = try await service.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            db.clock.advance(by: 899)
            #expect(try await service.authenticate(accessToken: first.accessToken) != nil)
            db.clock.advance(by: 2)
            #expect(try await service.authenticate(accessToken: first.accessToken) == nil)
            let other = try await service.signIn(email: "ana@example.com", password: "violet-harbor-91", device: nil)
            let renewed = try await service.refresh(first.refreshToken)
            try await service.revoke(session: SessionRef(accountID: renewed.accountID, sessionID: renewed.sessionID), reason: "logout")
            #expect(try await service.authenticate(accessToken: renewed.accessToken) == nil)
            #expect(try await service.authenticate(accessToken: other.accessToken) != nil)
        }
    }
}

@Suite("Accounts: per-address sign-in limit", .timeLimit(.minutes(10)))
struct AddressThrottleTests {
    @Test("failures from one address, across accounts, lock that address out; others are unaffected")
    func addressLimit() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            var policies = Policies.standard
            policies.ipLoginFailureLimit = 3
            let service = AccountService(environment: try db.accountsEnvironment(store, policies: policies))
            for name in ["a", "b"] {
                _ = try await service.signUp(
                    email: "\(name)@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            }
            for email in ["a@example.com", "nobody@example.com", "b@example.com"] {
                await #expect(throws: IdentityError.self) {
                    try await service.signIn(email: email, password: "wrong-password-1", device: nil, client: "198.51.100.7")
                }
            }
            let locked = await #expect(throws: TooManyAttempts.self) {
                try await service.signIn(email: "a@example.com", password: "violet-harbor-91", device: nil, client: "198.51.100.7")
            }
            #expect(locked?.retryAfter == 900)
            _ = try await service.signIn(email: "a@example.com", password: "violet-harbor-91", device: nil, client: "198.51.100.8")
            db.clock.advance(by: 900)
            _ = try await service.signIn(email: "b@example.com", password: "violet-harbor-91", device: nil, client: "198.51.100.7")
        }
    }
}

@Suite("Accounts: attempt counters in PostgreSQL", .timeLimit(.minutes(10)))
struct PostgresAttemptCounterTests {
    @Test("an attempt taken back leaves a window begun since alone, at a time with a fraction of a microsecond too")
    func uncountWithinItsWindow() async throws {
        try await TestPostgres.withDatabase { db in
            let counters = PostgresAttemptCounters(client: db.client)
            db.clock.advance(by: 0.123_456_789)
            let first = try await counters.count("ip:198.51.100.9", window: 900, now: db.clock.now())
            // Taken back in its own window: the next attempt is the first again.
            try await counters.uncount("ip:198.51.100.9", inWindowStartedAt: first.windowStarted)
            #expect(try await counters.count("ip:198.51.100.9", window: 900, now: db.clock.now()).count == 1)
            // A refusal taken back after its window ended must not take an attempt of the next one.
            db.clock.advance(by: 901)
            let next = try await counters.count("ip:198.51.100.9", window: 900, now: db.clock.now())
            #expect(next.count == 1 && next.windowStarted != first.windowStarted)
            try await counters.uncount("ip:198.51.100.9", inWindowStartedAt: first.windowStarted)
            #expect(try await counters.count("ip:198.51.100.9", window: 900, now: db.clock.now()).count == 2)
        }
    }
}

@Suite("Accounts: projections rebuild", .timeLimit(.minutes(10)))
struct ProjectionRebuildTests {
    static func dump(_ db: TestDatabase) async throws -> [String] {
        var lines: [String] = []
        for (table, order) in [
            ("accounts", "account_id"), ("sessions", "session_id"), ("spent_refresh_tokens", "refresh_token_sha256"),
            ("email_links", "token_sha256"), ("otp_requests", "request_id"), ("hold_lapses", "account_id, ref"),
        ] {
            // The client address of a code request is operational, not in any event.
            let rows = try await db.client.query(
                "SELECT (to_jsonb(t) - 'client_address')::text FROM \(table) t ORDER BY \(order)")
            lines += rows.rows.map { "\(table): \($0.string(0) ?? "")" }
        }
        return lines
    }

    /// The indexes of the projection tables, each marked with the constraint it backs.
    static func indexes(_ db: TestDatabase) async throws -> [String] {
        try await db.client.query(
            """
            SELECT i.indexdef || coalesce(' constraint ' || c.contype::text, '') FROM pg_indexes i
            LEFT JOIN pg_constraint c ON c.conname = i.indexname
            WHERE i.tablename = ANY('{accounts,sessions,spent_refresh_tokens,email_links,otp_requests,signup_cooldowns}')
            ORDER BY 1
            """
        ).rows.map { $0.string(0) ?? "" }
    }

    /// With the wall clock too: time moves between deciding and appending, and the replay must
    /// still see the times the incremental path used.
    @Test("a rebuild from the streams gives exactly the incremental projections", arguments: [false, true])
    func rebuildMatchesIncremental(wallClock: Bool) async throws {
        try await TestPostgres.withDatabase { db in
            let clock: any LedgerClock = wallClock ? SystemClock() : db.clock
            let store = EventStore(client: db.client, keyring: SubjectKeyring(masterKey: db.masterKey), clock: clock)
            let environment = try db.accountsEnvironment(store, clock: clock)
            let service = AccountService(environment: environment)
            let ana = try await service.signUp(
                email: "Ana@example.com", password: "violet-harbor-91", displayName: "Ana", handle: nil, device: "ios")
            db.clock.advance(by: 5)
            let again = try await service.signIn(email: "ana@example.com", password: "violet-harbor-91", device: "web")
            db.clock.advance(by: 5)
            let refreshed = try await service.refresh(again.refreshToken)
            _ = try? await service.refresh(again.refreshToken)
            try await service.revoke(session: SessionRef(accountID: ana.accountID, sessionID: ana.sessionID), reason: "logout")
            _ = try await service.updateProfile(ana.accountID, displayName: .some(nil), handle: "Ana_K")
            try await service.forgotPassword(email: "ana@example.com")
            let bob = try await service.signUp(
                email: "bob@example.com", password: "violet-harbor-91", displayName: nil, handle: "bobby", device: nil)
            let verifyToken = try #require(
                try await db.client.query(
                    "SELECT token FROM outbox WHERE recipient = 'bob@example.com' AND template = 'verify_email'")[0].string(0))
            _ = try await service.verifyEmail(token: verifyToken)
            #expect(refreshed.sessionID == again.sessionID && bob.accountID != ana.accountID)
            // An email change, confirmed (its revert link stays pending).
            let bobSession = SessionRef(accountID: bob.accountID, sessionID: bob.sessionID)
            let bobGrant = try await ReauthService(environment: service.environment).withPassword(
                bobSession, password: "violet-harbor-91", client: nil)
            try await service.requestEmailChange(bobSession, newEmail: "bob.new@example.com", reauthToken: bobGrant.token)
            let changeToken = try #require(
                try await db.client.query(
                    "SELECT token FROM outbox WHERE template = 'email_change_confirm'")[0].string(0))
            _ = try await service.confirmEmailChange(token: changeToken)
            // Holds: one that lapses on its own (indexed by its start), one that does not.
            try await service.placeHold(
                bob.accountID, Hold(ref: "s-1", kind: .upcomingSession, startsAt: db.clock.now().addingTimeInterval(86_400)))
            try await service.placeHold(bob.accountID, Hold(ref: "p-1", kind: .pendingPayout))
            // Phone codes: a sign-up by phone, a number added, a cancelled request.
            let otp = db.otpService(store, environment: environment)
            func code(_ phone: String) async throws -> String {
                try #require(
                    try await db.client.query(
                        "SELECT code FROM outbox WHERE recipient = $1 ORDER BY xmin::text::bigint DESC LIMIT 1", [.text(phone)])[0].string(
                            0))
            }
            let signUp = try await otp.request(
                phone: "+995511200300", country: nil, purpose: "sign_in", session: nil, reauthToken: nil, client: "198.51.100.7")
            _ = try await otp.verify(
                requestID: signUp.requestID.uuidString, code: try await code("+995511200300"), session: nil, reauthToken: nil, device: nil)
            // Ana's refreshed session ended when its spent token came back: a new sign-in.
            let anaNow = try await service.signIn(email: "ana@example.com", password: "violet-harbor-91", device: "web")
            let anaSession = SessionRef(accountID: ana.accountID, sessionID: anaNow.sessionID)
            let anaGrant = try await ReauthService(environment: environment).withPassword(
                anaSession, password: "violet-harbor-91", client: nil)
            // Ana's email is not verified, so her password grant does not add a method; one by the emailed link does.
            await #expect(throws: IdentityError.reauthRequired) {
                try await otp.request(
                    phone: "511 100 000", country: "GE", purpose: "add_phone", session: anaSession, reauthToken: anaGrant.token, client: nil
                )
            }
            try await ReauthService(environment: environment).sendEmailLink(anaSession)
            let reauthLink = try #require(
                try await db.client.query(
                    "SELECT token FROM outbox WHERE template = 'reauth_link' ORDER BY xmin::text::bigint DESC LIMIT 1")[0].string(0))
            let linkGrant = try await ReauthService(environment: environment).confirmEmailLink(token: reauthLink)
            let add = try await otp.request(
                phone: "511 100 000", country: "GE", purpose: "add_phone", session: anaSession, reauthToken: linkGrant.token, client: nil)
            _ = try await otp.verify(
                requestID: add.requestID.uuidString, code: try await code("+995511100000"), session: anaSession,
                reauthToken: linkGrant.token,
                device: nil)
            let dropped = try await otp.request(
                phone: "+995511100001", country: nil, purpose: "sign_in", session: nil, reauthToken: nil, client: nil)
            try await otp.cancel(requestID: dropped.requestID.uuidString, session: nil)

            let before = try await Self.dump(db)
            let indexesBefore = try await Self.indexes(db)
            #expect(indexesBefore.filter { $0.hasSuffix("constraint u") }.count >= 8)
            #expect(indexesBefore.filter { $0.hasSuffix("constraint p") }.count == 6)
            #expect(before.count >= 8)
            #expect(before.filter { $0.hasPrefix("otp_requests") }.count == 3)
            #expect(try await AccountProjections.rebuild(store: store) == 3)
            let after = try await Self.dump(db)
            #expect(after == before)
            // The load drops the indexes and key constraints and builds them again.
            #expect(try await Self.indexes(db) == indexesBefore)
            // One stream a batch: every batch read ahead and written behind the next fold.
            #expect(try await AccountProjections.rebuild(store: store, streamsPerRead: 1) == 3)
            #expect(try await Self.dump(db) == before)
        }
    }
}
