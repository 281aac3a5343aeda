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

@Suite("Retention sweep", .timeLimit(.minutes(10)))
struct RetentionSweepTests {
    func count(_ db: TestDatabase, _ table: String) async throws -> Int {
        Int(try await db.client.query("SELECT count(*) FROM \(table)")[0].int(0) ?? -1)
    }

    @Test("counters, code requests, settled messages and expired links go once their time is over, not before; a live lockout stays")
    func windows() async throws {
        try await TestPostgres.withDatabase { db in
            let start = db.clock.now()
            let counters = PostgresAttemptCounters(client: db.client)
            _ = try await counters.count("lookup:198.18.0.1", window: 900, now: start)
            // A lockout set to end two days from now outlives its row's day.
            try await db.client.query(
                "INSERT INTO login_throttle (key, failures, window_started, locked_until) VALUES ('email:locked', 5, $1, $2)",
                [.timestamp(start), .timestamp(start.addingTimeInterval(2 * 86_400))])
            try await db.client.query(
                """
                INSERT INTO otp_requests (request_id, account_id, purpose, phone_e164, client_address, created_at, expires_at)
                VALUES ($1, $2, 'sign_in', '+995511200300', '198.18.0.1', $3, $4)
                """,
                [.uuid(UUID()), .uuid(UUID()), .timestamp(start), .timestamp(start.addingTimeInterval(300))])
            for (delivered, index) in [(true, 0), (false, 1)] {
                try await db.client.query(
                    """
                    INSERT INTO outbox (id, channel, recipient, template, created_at, next_attempt_at, delivered_at)
                    VALUES ($1, 'sms', '+995511200300', 'otp', $2, $2, $3)
                    """,
                    [.uuid(UUID()), .timestamp(start.addingTimeInterval(Double(index))), delivered ? .timestamp(start) : .null])
            }
            try await db.client.query(
                "INSERT INTO email_links (token_sha256, link_id, account_id, purpose, expires_at) VALUES ('\\x01', $1, $2, 'verify_email', $3)",
                [.uuid(UUID()), .uuid(UUID()), .timestamp(start.addingTimeInterval(1800))])

            let sweep = RetentionSweep(client: db.client, clock: db.clock)
            // An hour in: only the delivered message's hour is over (the pending one stays).
            db.clock.advance(by: 3_601)
            #expect(try await sweep.run()["outbox"] == 1)
            #expect(try await count(db, "outbox") == 1)
            #expect(try await count(db, "login_throttle") == 2)
            #expect(try await count(db, "otp_requests") == 1)
            #expect(try await count(db, "email_links") == 1)
            // A day after: the counter and the code request are over; the link expired only
            // half an hour after the start, so its day is not.
            db.clock.advance(by: 86_400 - 3_601 + 1)
            let swept = try await sweep.run()
            #expect(swept["login_throttle"] == 1 && swept["otp_requests"] == 1 && swept["email_links"] == 0)
            #expect(try await db.client.query("SELECT key FROM login_throttle")[0].string(0) == "email:locked")
            db.clock.advance(by: 1_800)
            #expect(try await sweep.run()["email_links"] == 1)
            // The lockout over, its row goes too.
            db.clock.advance(by: 86_400)
            #expect(try await sweep.run()["login_throttle"] == 1)
            #expect(try await count(db, "login_throttle") == 0)
        }
    }

    @Test(
        "an address add-with-password waited for goes from the projection a day after its link expired unused, and a rebuild leaves it out")
    func pendingEmail() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let environment = try db.accountsEnvironment(store)
            let accounts = AccountService(environment: environment)
            let otp = db.otpService(store, environment: environment)
            let request = try await otp.request(
                phone: "+995511200300", country: nil, purpose: "sign_in", session: nil, reauthToken: nil, client: nil)
            let code = try await db.client.query("SELECT code FROM outbox WHERE template = 'otp'")[0].string(0) ?? ""
            guard
                case .session(let signedIn, _) = try await otp.verify(
                    requestID: request.requestID.uuidString, code: code, session: nil, reauthToken: nil, device: nil)
            else {
                Issue.record("no session")
                return
            }
            let session = SessionRef(accountID: signedIn.accountID, sessionID: signedIn.sessionID)
            let reauth = try await otp.request(phone: nil, country: nil, purpose: "reauth", session: session, reauthToken: nil, client: nil)
            let reauthCode =
                try await db.client.query(
                    "SELECT code FROM outbox WHERE template = 'otp' ORDER BY xmin::text::bigint DESC LIMIT 1")[0].string(0) ?? ""
            guard
                case .reauth(let grant) = try await otp.verify(
                    requestID: reauth.requestID.uuidString, code: reauthCode, session: session, reauthToken: nil, device: nil)
            else {
                Issue.record("no grant")
                return
            }
            _ = try await accounts.addEmailAndPassword(
                session, email: "ana@example.com", password: "violet-harbor-91", reauthToken: grant.token)
            func pending() async throws -> String? {
                try await db.client.query("SELECT pending_email FROM accounts")[0].string(0)
            }
            #expect(try await pending() == "ana@example.com")
            let sweep = RetentionSweep(client: db.client, clock: db.clock)
            db.clock.advance(by: 1_800 + 86_400 - 1)
            #expect(try await sweep.run()["accounts.pending_email"] == 0)
            db.clock.advance(by: 2)
            #expect(try await sweep.run()["accounts.pending_email"] == 1)
            #expect(try await pending() == nil)
            try await AccountProjections.rebuild(store: store, expiry: sweep.policy.projectionExpiry(at: db.clock.now()))
            #expect(try await pending() == nil)
        }
    }

    @Test("an answered passkey challenge is kept an hour past its expiry (its seal refuses it by then), then goes")
    func spentPasskeyChallenges() async throws {
        try await TestPostgres.withDatabase { db in
            let spent = PostgresSpentChallenges(client: db.client)
            let expiry = db.clock.now().addingTimeInterval(300)
            let first = try await spent.spend([1, 2, 3], expiresAt: expiry)
            let again = try await spent.spend([1, 2, 3], expiresAt: expiry)
            #expect(first && !again)
            let sweep = RetentionSweep(client: db.client, clock: db.clock)
            db.clock.advance(by: 300 + 3_599)
            #expect(try await sweep.run()["spent_passkey_challenges"] == 0)
            db.clock.advance(by: 2)
            #expect(try await sweep.run()["spent_passkey_challenges"] == 1)
            #expect(try await count(db, "spent_passkey_challenges") == 0)
        }
    }

    @Test("a backlog larger than a batch goes in several batches")
    func batches() async throws {
        try await TestPostgres.withDatabase { db in
            try await db.client.query(
                """
                INSERT INTO login_throttle (key, failures, window_started)
                SELECT 'ip:' || n, 1, $1 FROM generate_series(1, 2500) AS n
                """,
                [.timestamp(db.clock.now())])
            db.clock.advance(by: 86_401)
            var policy = RetentionSweep.Policy()
            policy.batchSize = 1_000
            #expect(try await RetentionSweep(client: db.client, clock: db.clock, policy: policy).run()["login_throttle"] == 2_500)
            #expect(try await count(db, "login_throttle") == 0)
        }
    }

    /// A request seals its payload, so its key commits, before its event and its row do: the
    /// sweep sees a key with neither account nor request then, and must not destroy it.
    @Test("a key made within the hour, its request not yet written, is kept; an hour later, still alone, it goes")
    func keyOfARequestInFlight() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let subject = UUID()
            _ = try await db.client.withConnection { try await store.keyring.dataKey(for: subject, on: $0) }
            let sweep = RetentionSweep(client: db.client, clock: db.clock)
            db.clock.advance(by: 2 * 86_400)
            #expect(try await sweep.run()["subject_keys"] == 0)
            #expect(try await db.client.query("SELECT wrapped_key IS NOT NULL FROM subject_keys")[0].bool(0) == true)
            try await db.client.query("UPDATE subject_keys SET created_at = created_at - interval '61 minutes'")
            #expect(try await sweep.run()["subject_keys"] == 1)
        }
    }

    @Test(
        "a number typed for a sign-in code and abandoned: a day later its requests and its key are gone, the number unreadable; an account's key stays"
    )
    func abandonedCodeRequest() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let environment = try db.accountsEnvironment(store)
            let accounts = AccountService(environment: environment)
            let otp = db.otpService(store, environment: environment)
            let requested = try await otp.request(
                phone: "+995511200377", country: nil, purpose: "sign_in", session: nil, reauthToken: nil, client: nil)
            let member = try await accounts.signUp(
                email: "ana@example.com", password: "violet-harbor-91", displayName: nil, handle: nil, device: nil)
            let sweep = RetentionSweep(client: db.client, clock: db.clock)
            // Within its day nothing goes: the request may still be verified.
            #expect(try await sweep.run()["subject_keys"] == 0)
            #expect(try await store.readStream(requested.requestID).first?.payload != nil)
            db.clock.advance(by: 86_401)
            // The database's clock does not move with the test's: the keys' hour, as if it had.
            try await db.client.query("UPDATE subject_keys SET created_at = created_at - interval '2 hours'")
            let swept = try await sweep.run()
            #expect(swept["otp_requests"] == 1 && swept["subject_keys"] == 1)
            // The request's history stays (the chain verifies), its payload is unreadable.
            let history = try await store.readStream(requested.requestID)
            #expect(!history.isEmpty && history.allSatisfy { $0.payload == nil })
            let rows = try await db.client.query(
                "SELECT count(*) FROM events WHERE position(convert_to('995511200377', 'UTF8') IN payload) > 0")
            #expect(try rows[0].int(0) == 0)
            // The account's key is untouched.
            #expect(try await store.readStream(member.accountID).first?.payload != nil)
            #expect(try await sweep.run()["subject_keys"] == 0)
        }
    }
}
