import Foundation
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerIdentity
import LedgerTestSupport
import LedgerWebAuthnTesting
import Testing

/// The console's staff on PostgreSQL: a sealed stream each, the lookups in the events'
/// transaction, one live staff member per address, removal ending every session for every instance.
@Suite("PostgreSQL: staff", .timeLimit(.minutes(5)))
struct PostgresStaffRepositoryTests {
    static let origin = "https://support.321.fit"

    @Test("invite, register, sign in, remove: the lookups follow, the address is sealed, the invitation goes through the outbox")
    func lifecycle() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let repository = PostgresStaffRepository(store: store, clock: db.clock)
            let console = StaffConsole(
                staff: repository, environment: try db.accountsEnvironment(store), origin: Self.origin, relyingPartyName: "321Fit support",
                masterKey: db.masterKey, spent: PostgresSpentChallenges(client: db.client))
            let (staffID, _) = try await console.invite(email: "Nino.Beridze@321.fit", role: .admin)
            let queued = try await db.client.query("SELECT token, template, account_id FROM outbox")
            #expect(queued.rowCount == 1 && queued[0].string(1) == StaffConsole.invitationTemplate && queued[0].string(2) == nil)
            let token = try #require(queued[0].string(0))
            #expect(try await console.invitation(token: token).staffID == staffID)

            let authenticator = SoftAuthenticator()
            let options = try await console.registrationOptions(token: token)
            let made = authenticator.makeCredential(
                rpID: "support.321.fit", origin: Self.origin, challenge: options.challenge, userHandle: options.userHandle)
            _ = try await console.register(token: token, credential: made.response)
            let signInOptions = try console.signInOptions()
            let (cookie, session) = try await console.signIn(
                credential: authenticator.getAssertion(credential: made.credential, challenge: signInOptions.challenge), client: nil)
            #expect(try await console.authenticate(token: cookie) == session)
            #expect(try await repository.staff(email: "nino.beridze@321.fit") == staffID)

            // Sealed: the address is nowhere in the events' payloads in the clear.
            let clear = try await db.client.query(
                "SELECT count(*) FROM events WHERE stream_id = $1 AND position($2::bytea in payload) > 0",
                [.uuid(staffID), .bytea(Array("Beridze".utf8))])
            #expect(try clear[0].int(0) == 0)
            let types = try await store.readStream(staffID).map(\.type)
            #expect(types == ["staff.invited", "staff.passkey_registered", "staff.signed_in"])

            // Removal ends the session for any instance: the lookup itself refuses it.
            #expect(try await console.remove(email: "nino.beridze@321.fit")?.isRemoved == true)
            #expect(try await console.authenticate(token: cookie) == nil)
            #expect(try await repository.session(tokenHash: SHA256.hash(Array(cookie.utf8)), at: db.clock.now()) == nil)
            // The address may be added again, as someone new.
            let (again, _) = try await console.invite(email: "nino.beridze@321.fit", role: .support)
            let everyone = try await console.list()
            #expect(again != staffID && everyone.count == 2)
        }
    }

    @Test("two instances inviting one new address at once make one staff member")
    func concurrentInvites() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let console = StaffConsole(
                staff: PostgresStaffRepository(store: store, clock: db.clock), environment: try db.accountsEnvironment(store),
                origin: Self.origin, relyingPartyName: "321Fit support", masterKey: db.masterKey,
                spent: PostgresSpentChallenges(client: db.client))
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 {
                    group.addTask { (try? await console.invite(email: "lela@321.fit", role: .support)) != nil }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.contains(true))
            let live = try await db.client.query("SELECT count(*) FROM staff WHERE removed_at IS NULL")
            #expect(try live[0].int(0) == 1)
        }
    }
}

/// What the feed, webhooks and exports send of the desk's records, and what auditors read.
@Suite("Event documents: the desk's notes")
struct StaffNotesDocumentTests {
    func recorded(_ type: String, _ payload: [String: Any]) throws -> RecordedEvent {
        RecordedEvent(
            cursor: FeedCursor(transactionID: 1, position: 1), eventID: UUID(), streamID: UUID(), streamVersion: 1, type: type,
            schemaVersion: 1,
            subjectID: nil, payload: Array(try JSONSerialization.data(withJSONObject: payload)), metadataJSON: "{}", recordedAt: Date())
    }

    @Test("a support record's operator, reason and key, and a staff member's address, reach auditors only")
    func notes() throws {
        let record = try recorded(
            "admin.disabled", ["operator": "Nino", "reason": "ticket 4411", "key_id": UUID().uuidString, "view": "summary"])
        let invited = try recorded("staff.invited", ["email": "nino@321.fit", "role": "admin", "invitation_sha256": "aa"])
        for event in [record, invited] {
            let sent = String(decoding: EventDocument.json(event), as: UTF8.self)
            #expect(!sent.contains("Nino") && !sent.contains("4411") && !sent.contains("nino@321.fit") && !sent.contains("key_id"))
            let audited = String(decoding: EventDocument.auditJSONArray([event]), as: UTF8.self)
            #expect(audited.contains("Nino") || audited.contains("nino@321.fit"))
            #expect(!audited.contains("invitation_sha256"), "a secret's hash is hidden from auditors too")
        }
        #expect(String(decoding: EventDocument.json(record), as: UTF8.self).contains("\"view\":\"summary\""))
    }
}
