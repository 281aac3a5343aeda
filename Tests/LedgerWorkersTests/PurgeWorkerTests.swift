import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerPostgres
import LedgerTestSupport
import LedgerWorkers
import Testing

@Suite("Purge worker", .timeLimit(.minutes(10)))
struct PurgeWorkerTests {
    struct Fixture {
        let store: EventStore
        let accounts: AccountService
        let reauth: ReauthService
        let otp: OTPService
    }

    func fixture(_ db: TestDatabase) throws -> Fixture {
        let store = db.eventStore()
        // With the throttle and the limits, whose rows name the person (an email's hash, an
        // account, a client's address) until a purge or the retention sweep ends them.
        let environment = try db.accountsEnvironment(store)
        return Fixture(
            store: store, accounts: AccountService(environment: environment), reauth: ReauthService(environment: environment),
            otp: db.otpService(store, environment: environment))
    }

    /// An account with an email, a handle, a name and a phone, that signed up, mistyped its
    /// password and asked for a code from the client `198.18.7.<index>`, deleted now.
    func deletedAccount(_ fixture: Fixture, _ db: TestDatabase, index: Int) async throws -> UUID {
        let (ref, grant) = try await member(fixture, db, index: index)
        _ = try await fixture.accounts.deleteAccount(ref, reauthToken: grant.token)
        return ref.accountID
    }

    /// An account with an email (verified by its link), a handle, a name and a phone (added by
    /// a code), that signed up, mistyped its password and asked for the code from the client
    /// `198.18.7.<index>`; its session and the re-auth grant it holds.
    func member(_ fixture: Fixture, _ db: TestDatabase, index: Int) async throws -> (SessionRef, ReauthGrantToken) {
        let client = "198.18.7.\(index)"
        let session = try await fixture.accounts.signUp(
            email: "purge\(index)@example.com", password: "violet-harbor-91", displayName: "Nino Beridze \(index)",
            handle: "nino_\(index)", device: nil, client: client)
        await #expect(throws: IdentityError.self) {
            try await fixture.accounts.signIn(email: "purge\(index)@example.com", password: "wrong-password-1", device: nil, client: client)
        }
        let ref = SessionRef(accountID: session.accountID, sessionID: session.sessionID)
        let phone = "+99559900\(String(format: "%04d", index))"
        let verification = try #require(
            try await db.client.query(
                "SELECT token FROM outbox WHERE recipient = $1 AND template = 'verify_email'", [.text("purge\(index)@example.com")])[0]
                .string(0))
        _ = try await fixture.accounts.verifyEmail(token: verification)
        let grant = try await fixture.reauth.withPassword(ref, password: "violet-harbor-91", client: nil)
        let requested = try await fixture.otp.request(
            phone: phone, country: nil, purpose: "add_phone", session: ref, reauthToken: grant.token, client: client)
        let code = try #require(
            try await db.client.query(
                "SELECT code FROM outbox WHERE recipient = $1 ORDER BY xmin::text::bigint DESC LIMIT 1", [.text(phone)])[0].string(0))
        _ = try await fixture.otp.verify(
            requestID: requested.requestID.uuidString, code: code, session: ref, reauthToken: grant.token, device: nil)
        return (ref, grant)
    }

    @Test("not at 29 days, at 30 days: the key is destroyed, personal data is gone from every table, the chain still verifies")
    func purge() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try fixture(db)
            let accountID = try await deletedAccount(fixture, db, index: 1)
            // A snapshot of the account's state (long accounts have them) goes with it.
            try await db.client.query(
                "INSERT INTO stream_snapshots (stream_id, version, format, last_recorded_at, sealed) VALUES ($1, 1, 1, now(), '\\x00')",
                [.uuid(accountID)])
            let worker = PurgeWorker(store: fixture.store, clock: db.clock, retention: RetentionSweep(client: db.client, clock: db.clock))
            db.clock.advance(by: 29 * 86400)
            #expect(try await worker.runOnce() == 0)
            db.clock.advance(by: 86400 + 1)
            #expect(try await worker.due().map(\.accountID) == [accountID])
            #expect(try await worker.runOnce() == 1)
            #expect(try await worker.runOnce() == 0)
            #expect(
                try await db.client.query("SELECT count(*) FROM stream_snapshots WHERE stream_id = $1", [.uuid(accountID)])[0].int(0) == 0)

            // A raw scan of every table for the account's plaintext, and for its email's unsalted
            // hash and its client's address.
            let tables = try await db.client.query(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")
            let needles = [
                "purge1@example.com", "nino_1", "Nino Beridze", "+995599000001", "995599000001", "198.18.7.1",
                Hex.encode(SHA256.hash(Array("purge1@example.com".utf8))),
            ]
            for table in tables.rows.compactMap({ $0.string(0) }) {
                for needle in needles {
                    let hits = try await db.client.query(
                        "SELECT count(*) FROM \(table) t WHERE strpos(t::text, $1) > 0 OR strpos(convert_from(convert_to(t::text, 'UTF8'), 'UTF8'), $1) > 0",
                        [.text(needle)])
                    #expect(try hits[0].int(0) == 0, "\(needle) found in \(table)")
                }
            }
            let payloads = try await db.client.query(
                "SELECT count(*) FROM events WHERE position(convert_to('purge1@example.com', 'UTF8') IN payload) > 0")
            #expect(try payloads[0].int(0) == 0)

            // The history: every event still listed, payloads unreadable but the last; the chain verifies.
            let history = try await fixture.store.readStream(accountID)
            #expect(history.last?.type == "account.purged")
            // The worker, not the account, caused the purge; the account caused what came before.
            #expect(history.last?.metadata.actor == "system:purge")
            #expect(history.first?.metadata.actor == "account:\(accountID.lowercased)")
            #expect(history.dropLast().allSatisfy { $0.payload == nil })
            #expect(try await fixture.store.verify(streamID: accountID).ok)
            // A rebuild gives the same projections as the purge left.
            let before = try await db.client.query("SELECT count(*) FROM accounts")
            try await AccountProjections.rebuild(store: fixture.store)
            let after = try await db.client.query("SELECT count(*) FROM accounts")
            #expect(try before[0].int(0) == after[0].int(0))
        }
    }

    /// The events of a code request and of an email link stay after the sweep deletes their
    /// rows; a rebuild must not project the rows again (a phone number, a client's address).
    /// Nor may it leave out a row the live tables still hold (the service may keep longer).
    @Test(
        "a rebuild after the retention sweep brings back no code request or email link the sweep deleted, and keeps current ones and any the sweep has kept"
    )
    func rebuildAfterSweep() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try fixture(db)
            let (ref, _) = try await member(fixture, db, index: 4)
            func rows() async throws -> [String] {
                var lines: [String] = []
                for (table, order) in [("otp_requests", "request_id"), ("email_links", "token_sha256"), ("accounts", "account_id")] {
                    lines += try await db.client.query("SELECT to_jsonb(t)::text FROM \(table) t ORDER BY \(order)").rows.map {
                        "\(table): \($0.string(0) ?? "")"
                    }
                }
                return lines
            }
            let made = try await rows()
            #expect(made.contains { $0.hasPrefix("otp_requests") } && made.contains { $0.hasPrefix("email_links") })
            let sweep = RetentionSweep(client: db.client, clock: db.clock)
            db.clock.advance(by: 10 * 86_400)
            // Past the rebuild's expiry, but not yet swept (the service's retention may be
            // longer than the rebuild's settings say): kept.
            try await AccountProjections.rebuild(store: fixture.store, expiry: sweep.policy.projectionExpiry(at: db.clock.now()))
            #expect(try await rows() == made)
            let swept = try await sweep.run()
            #expect(swept["otp_requests"] == 1 && swept["email_links"] == 1)
            // Current rows, which a rebuild keeps: a code request and a reset link made now.
            let grant = try await fixture.reauth.withPassword(ref, password: "violet-harbor-91", client: nil)
            _ = try await fixture.otp.request(
                phone: "+995599001234", country: nil, purpose: "change_phone", session: ref, reauthToken: grant.token,
                client: "198.18.7.4")
            try await fixture.accounts.forgotPassword(email: "purge4@example.com")
            let live = try await rows()
            #expect(live.filter { $0.hasPrefix("otp_requests") }.count == 1 && live.filter { $0.hasPrefix("email_links") }.count == 1)

            let expiry = sweep.policy.projectionExpiry(at: db.clock.now())
            try await AccountProjections.rebuild(store: fixture.store, expiry: expiry)
            #expect(try await rows() == live)
            // Without the sweep's expiry a rebuild projects every row the events give: the
            // swept ones come back, number and all, until the next sweep.
            try await AccountProjections.rebuild(store: fixture.store)
            let everything = try await rows()
            #expect(everything.count == live.count + 2)
            #expect(everything.contains { $0.contains("+995599000004") })
            #expect(try await sweep.run()["otp_requests"] == 1)
            try await AccountProjections.rebuild(store: fixture.store, expiry: expiry)
            #expect(try await rows() == live)
        }
    }

    /// Rebuilds visit accounts by id, so "the last account written owns the row" would hand
    /// a cooldown to whichever id sorts last, and that account's purge would clear it early.
    @Test("an address deleted twice: the later account owns its cooldown, after a rebuild too")
    func cooldownOwner() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try fixture(db)
            func signUpAndDelete(_ email: String) async throws -> UUID {
                let session = try await fixture.accounts.signUp(
                    email: email, password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
                let ref = SessionRef(accountID: session.accountID, sessionID: session.sessionID)
                // Only a verified address is held after a deletion.
                let link = try await db.client.query(
                    "SELECT token FROM outbox WHERE template = 'verify_email' AND account_id = $1", [.uuid(session.accountID)])
                _ = try await fixture.accounts.verifyEmail(token: try #require(link.rowCount == 1 ? link[0].string(0) : nil))
                let grant = try await fixture.reauth.withPassword(ref, password: "violet-harbor-91", client: nil)
                _ = try await fixture.accounts.deleteAccount(ref, reauthToken: grant.token)
                return session.accountID
            }
            // Several addresses, so that some first account's id sorts after its successor's.
            let emails = (1...6).map { "twice\($0)@example.com" }
            for email in emails { _ = try await signUpAndDelete(email) }
            db.clock.advance(by: 8 * 86400)
            var later: Set<UUID> = []
            for email in emails { later.insert(try await signUpAndDelete(email)) }
            func owners() async throws -> [String] {
                try await db.client.query("SELECT account_id::text || ' ' || until::text FROM signup_cooldowns ORDER BY key_hmac")
                    .rows.map { $0.string(0) ?? "" }
            }
            let live = try await owners()
            #expect(live.count == emails.count)
            #expect(Set(live.compactMap { $0.split(separator: " ").first.flatMap { UUID(uuidString: String($0)) } }) == later)
            try await AccountProjections.rebuild(store: fixture.store)
            #expect(try await owners() == live)
        }
    }

    @Test("a crash between key destruction and the clean-up rolls back; the next pass purges cleanly")
    func crashAndResume() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try fixture(db)
            let accountID = try await deletedAccount(fixture, db, index: 2)
            db.clock.advance(by: 30 * 86400 + 1)
            struct Crash: Error {}
            let crashing = PurgeWorker(store: fixture.store, clock: db.clock, afterKeyDestruction: { _ in throw Crash() })
            await #expect(throws: Crash.self) { try await crashing.runOnce() }
            let key = try await db.client.query(
                "SELECT wrapped_key IS NOT NULL FROM subject_keys WHERE subject_id = $1", [.uuid(accountID)])
            #expect(try key[0].bool(0) == true)
            #expect(try await fixture.store.readStream(accountID).allSatisfy { $0.type != "account.purged" && $0.payload != nil })
            #expect(try await PurgeWorker(store: fixture.store, clock: db.clock).runOnce() == 1)
            let purged = try await db.client.query(
                "SELECT count(*) FROM events WHERE stream_id = $1 AND event_type = 'account.purged'", [.uuid(accountID)])
            #expect(try purged[0].int(0) == 1)
        }
    }

    @Test("an account whose stream a command holds is skipped, not waited on, and purged once it is free")
    func lockedAccountSkipped() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try fixture(db)
            let busy = try await deletedAccount(fixture, db, index: 30)
            db.clock.advance(by: 60)
            let free = try await deletedAccount(fixture, db, index: 31)
            db.clock.advance(by: 30 * 86400 + 1)
            let worker = PurgeWorker(store: fixture.store, clock: db.clock)
            try await db.client.transaction { connection in
                // What a command on the account holds from its first statement to its commit.
                _ = try await connection.query("SELECT ledger_lock_stream($1)", [.uuid(busy)])
                #expect(try await worker.purgeNext() == free)
                #expect(try await worker.purgeNext() == nil)
            }
            #expect(try await worker.purgeNext() == busy)
            #expect(try await worker.purgeNext() == nil)
        }
    }

    @Test("two workers at once never purge one account twice")
    func twoWorkers() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try fixture(db)
            for index in 10..<22 { _ = try await deletedAccount(fixture, db, index: index) }
            db.clock.advance(by: 30 * 86400 + 1)
            let otherClient = PostgresClient(configuration: .init(url: db.url, maximumConnections: 4))
            let other = EventStore(client: otherClient, keyring: SubjectKeyring(masterKey: db.masterKey), clock: db.clock)
            async let first = PurgeWorker(store: fixture.store, clock: db.clock).runOnce()
            async let second = PurgeWorker(store: other, clock: db.clock).runOnce()
            let (a, b) = try await (first, second)
            await otherClient.shutdown()
            #expect(a + b == 12)
            let perStream = try await db.client.query(
                "SELECT count(*) FROM events WHERE event_type = 'account.purged' GROUP BY stream_id HAVING count(*) > 1")
            #expect(perStream.rowCount == 0)
        }
    }

    @Test("an Apple account-delete that holds blocked is scheduled by the next pass once they are gone, not before")
    func requestedDeletion() async throws {
        try await TestPostgres.withDatabase { db in
            let fixture = try fixture(db)
            let repository = db.accountRepository(fixture.store)
            let session = try await fixture.accounts.signUp(
                email: "requested@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let accountID = session.accountID
            _ = try await repository.execute(accountID) { _ in
                .linkProvider(
                    .init(provider: .apple, subject: "a-req", email: nil, emailVerified: false), sessionID: nil, reauthTokenHash: nil)
            }
            try await fixture.accounts.placeHold(accountID, Hold(ref: "p1", kind: .pendingPayout, keyID: "payouts"))
            _ = try await repository.execute(accountID) { _ in
                .handleAppleNotification(AppleNotice(id: "n-1", kind: .accountDelete, subject: "a-req", eventTime: nil))
            }
            #expect(try await fixture.accounts.account(accountID).isDisabled)

            let worker = PurgeWorker(store: fixture.store, clock: db.clock, accounts: fixture.accounts)
            _ = try await worker.runOnce()
            #expect(try await fixture.accounts.account(accountID).isDeleted == false)
            try await fixture.accounts.releaseHold(accountID, ref: "p1", keyID: "payouts")
            _ = try await worker.runOnce()
            let state = try await fixture.accounts.account(accountID)
            #expect(state.isDeleted && state.purgeAfter == db.clock.now().addingTimeInterval(Policies.standard.purgeDelay))
            // The next pass finds nothing more to do.
            let events = try await fixture.store.readStream(accountID).count
            _ = try await worker.runOnce()
            #expect(try await fixture.store.readStream(accountID).count == events)
        }
    }
}
