import Foundation
import LedgerAccounts
import LedgerCrypto
import LedgerIdentity
import LedgerTestSupport
import Testing

/// The import use case on the in-memory repository: what each record becomes, the refusals,
/// running twice, and the next sign-in of an imported password.
@Suite("Import: the use case")
struct AccountImporterTests {
    let config = FirebaseHashConfig(try! ImportFixtures.data("firebase-hash-config.json"))

    func importFile(
        _ app: InMemoryAccounts, _ name: String, format: ImportFormat, options: AccountImporter.Options? = nil
    ) async throws -> [ImportReportLine] {
        let entries = try format.entries(try ImportFixtures.data(name), hashConfig: config)
        return try await AccountImporter(store: app.repository).importBatch(
            entries, options: options ?? .init(source: format.rawValue))
    }

    func reasons(_ lines: [ImportReportLine]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: lines.map { ($0.externalID ?? "#\($0.index)", $0.reason?.rawValue ?? $0.outcome.rawValue) })
    }

    @Test("each record becomes an account or is refused with its reason; nothing is sent to anyone")
    func outcomes() async throws {
        let app = try InMemoryAccounts()
        let lines = try await importFile(app, "users.jsonl", format: .jsonl)
        #expect(
            reasons(lines) == [
                "jl-django": "imported", "jl-scrypt": "imported", "jl-2y": "imported", "#4": "invalid_record", "jl-apple": "imported",
                "jl-bad-email": "invalid_email", "jl-bad-phone": "invalid_phone", "jl-md5": "unsupported_hash",
                "jl-nothing": "invalid_record",
            ])
        #expect(lines.map(\.index) == Array(0..<9))
        #expect(await app.repository.outbox.isEmpty, "an imported account gets no email or SMS")
        let firebase = try await importFile(app, "firebase-users.json", format: .firebase)
        #expect(firebase.filter { $0.outcome == .imported }.count == 4 && firebase.last?.reason == .invalidRecord)
        let auth0 = try await importFile(app, "auth0-users.json", format: .auth0)
        #expect(reasons(auth0)["auth0|md5"] == "unsupported_hash" && auth0.filter { $0.outcome == .imported }.count == 4)
        #expect(await app.repository.outbox.isEmpty)
        let ana = try #require(firebase.first { $0.externalID == "fb-ana" }?.accountID)
        let state = try await app.repository.load(ana)
        #expect(state.email == "ana@fb.example" && state.emailVerified && state.displayName == "Ana Beridze" && state.handleIsTemporary)
    }

    @Test("--skip-passwords imports a record whose hash cannot be checked, without a password")
    func skipPasswords() async throws {
        let app = try InMemoryAccounts()
        let lines = try await importFile(app, "users.jsonl", format: .jsonl, options: .init(source: "jsonl", skipPasswords: true))
        let md5 = try #require(lines.first { $0.externalID == "jl-md5" })
        #expect(md5.outcome == .imported)
        #expect(try await app.repository.load(try #require(md5.accountID)).passwordHash == nil)
        #expect(try await app.repository.load(try #require(lines[0].accountID)).passwordHash != nil, "a checkable hash is kept")
    }

    @Test("running the same file again imports nothing twice: every record is skipped, with its account")
    func idempotent() async throws {
        let app = try InMemoryAccounts()
        let first = try await importFile(app, "auth0-users.json", format: .auth0)
        let events = await app.repository.eventCount()
        let second = try await importFile(app, "auth0-users.json", format: .auth0)
        #expect(second.filter { $0.outcome == .skipped }.map(\.accountID) == first.filter { $0.outcome == .imported }.map(\.accountID))
        #expect(await app.repository.eventCount() == events)
        // Another source is another system: its ids are its own.
        let other = try await importFile(app, "auth0-users.json", format: .auth0, options: .init(source: "auth0-eu"))
        #expect(other.allSatisfy { $0.outcome == .refused }, "the same people's addresses are taken by the first import")
        #expect(Set(other.compactMap(\.reason)) == [.emailTaken, .unsupportedHash])
    }

    @Test("a dry run checks every record and writes nothing")
    func dryRun() async throws {
        let app = try InMemoryAccounts()
        let dry = try await importFile(app, "users.jsonl", format: .jsonl, options: .init(source: "jsonl", dryRun: true))
        #expect(dry.filter { $0.outcome == .imported }.count == 4)
        #expect(await app.repository.eventCount() == 0)
        // The same id twice in a dry run: the second is "skipped", and names no account either.
        let twice = try await AccountImporter(store: app.repository).importBatch(
            [.record(.init(externalID: "t", email: "t@example.org")), .record(.init(externalID: "t", email: "t@example.org"))],
            options: .init(source: "jsonl", dryRun: true))
        #expect(twice.map(\.outcome) == [.imported, .skipped] && twice.allSatisfy { $0.accountID == nil })
        let real = try await importFile(app, "users.jsonl", format: .jsonl)
        #expect(real.map(\.outcome) == dry.map(\.outcome) && real.map(\.reason) == dry.map(\.reason))
    }

    @Test("an address or number another account holds refuses that record alone: email_taken, phone_taken, provider_taken")
    func conflicts() async throws {
        let app = try InMemoryAccounts()
        _ = try await app.signUp("django@jl.example")
        let lines = try await importFile(app, "users.jsonl", format: .jsonl)
        #expect(reasons(lines)["jl-django"] == "email_taken")
        #expect(reasons(lines)["jl-scrypt"] == "imported")
        let again = [
            ImportEntry.record(.init(externalID: "x-1", phone: "+995555123123", phoneVerified: true)),
            .record(.init(externalID: "x-2", providers: [.init(provider: "apple", subject: "apple-subject-3003")])),
            .record(.init(externalID: "x-3", email: "x3@example.org", providers: [.init(provider: "facebook", subject: "1")])),
            .record(.init(externalID: "x-4", phone: "+995555123124")),
        ]
        let refused = try await AccountImporter(store: app.repository).importBatch(again, options: .init(source: "other"))
        #expect(refused.map(\.reason) == [.phoneTaken, .providerTaken, .invalidRecord, .invalidRecord])
        let providerEmail = try await AccountImporter(store: app.repository).importBatch(
            [.record(.init(externalID: "x-5", providers: [.init(provider: "google", subject: "g-5", email: "not an address")]))],
            options: .init(source: "other"))
        #expect(providerEmail.map(\.reason) == [.invalidEmail])
    }

    @Test("an address of a deleted account still in its cooldown refuses the record: identifier_held")
    func identifierHeld() async throws {
        let app = try InMemoryAccounts()
        let session = try await app.signUp("django@jl.example", verified: true)
        let grant = try await app.reauth.withPassword(session, password: InMemoryAccounts.password, client: nil)
        _ = try await app.accounts.deleteAccount(session, reauthToken: grant.token)
        let lines = try await importFile(app, "users.jsonl", format: .jsonl)
        #expect(reasons(lines)["jl-django"] == "identifier_held")
        #expect(reasons(lines)["jl-2y"] == "imported")
    }

    @Test("an imported password signs in once with its own form, which the service's scrypt then replaces (password.rehashed)")
    func signInRehashes() async throws {
        let app = try InMemoryAccounts()
        var imported: [(email: String, id: String, accountID: UUID)] = []
        for (name, format) in [("firebase-users.json", ImportFormat.firebase), ("auth0-users.json", .auth0), ("users.jsonl", .jsonl)] {
            let entries = try format.entries(try ImportFixtures.data(name), hashConfig: config)
            let lines = try await AccountImporter(store: app.repository).importBatch(entries, options: .init(source: format.rawValue))
            for case (.record(let record), let line) in zip(entries, lines) where ImportFixtures.passwords[record.externalID] != nil {
                if let email = record.email, let accountID = line.accountID { imported.append((email, record.externalID, accountID)) }
            }
        }
        #expect(imported.count == 8, "Firebase, bcrypt ($2b$, $2y$), Argon2, PBKDF2 (PHC and Django) and passlib scrypt")
        for person in imported {
            let password = try #require(ImportFixtures.passwords[person.id])
            let before = try await app.repository.load(person.accountID).passwordHash
            await #expect(throws: IdentityError.invalidCredentials) {
                _ = try await app.accounts.signIn(email: person.email, password: password + "!", device: "test")
            }
            if person.id == "fb-dato" {
                await #expect(throws: IdentityError.accountDisabled, "imported disabled") {
                    _ = try await app.accounts.signIn(email: person.email, password: password, device: "test")
                }
                continue
            }
            _ = try await app.accounts.signIn(email: person.email, password: password, device: "test")
            let history = try await app.repository.history(person.accountID).map(\.type)
            // passlib's scrypt without `.` or `/` in it reads as the service's own form: the same
            // function, rehashed only when weaker than today's cost.
            if Scrypt.parameters(of: try #require(before)) == nil { #expect(history.contains("password.rehashed"), "\(person.id)") }
            let after = try #require(try await app.repository.load(person.accountID).passwordHash)
            #expect(Scrypt.parameters(of: after) != nil)
            _ = try await app.accounts.signIn(email: person.email, password: password, device: "test")
            #expect(try await app.repository.history(person.accountID).filter { $0.type == "password.rehashed" }.count <= 1)
            #expect(try await app.repository.load(person.accountID).passwordHash == after, "the second sign-in keeps the scrypt")
        }
    }

    @Test("a wrong password against an imported hash counts toward the same lockout as any other")
    func lockout() async throws {
        let app = try InMemoryAccounts()
        let entries = try ImportFormat.auth0.entries(try ImportFixtures.data("auth0-users.json"))
        _ = try await AccountImporter(store: app.repository).importBatch(entries, options: .init(source: "auth0"))
        for _ in 0..<Policies.standard.loginMaxFailures {
            await #expect(throws: IdentityError.invalidCredentials) {
                _ = try await app.accounts.signIn(email: "gio@a0.example", password: "wrong-password-1", device: "test")
            }
        }
        await #expect(throws: (any Error).self) {
            _ = try await app.accounts.signIn(
                email: "gio@a0.example", password: try #require(ImportFixtures.passwords["auth0|bcrypt"]), device: "test")
        }
    }
}
