import Foundation
import LedgerAccounts
import LedgerCrypto
import LedgerIdentity
import LedgerTestSupport
import Testing

/// The three file formats read from files shaped as Firebase, Auth0 and the ledger export them,
/// with hashes their libraries made (scripts/import-fixtures.py).
@Suite("Import: the file formats")
struct ImportFormatTests {
    let config = FirebaseHashConfig(try! ImportFixtures.data("firebase-hash-config.json"))

    func records(_ entries: [ImportEntry]) -> [String: ImportRecord] {
        Dictionary(uniqueKeysWithValues: entries.compactMap { if case .record(let r) = $0 { (r.externalID, r) } else { nil } })
    }

    @Test("Firebase's hash config reads as JSON and as the console's text, the same")
    func hashConfig() throws {
        let text = try #require(FirebaseHashConfig(try ImportFixtures.data("firebase-hash-config.txt")))
        #expect(config == text && text.rounds == 8 && text.memoryCost == 10)
        #expect(FirebaseHashConfig(Data("{\"algorithm\":\"HMAC_SHA256\",\"base64_signer_key\":\"a2V5\"}".utf8)) == nil)
        #expect(FirebaseHashConfig(Data("hash_config { nothing }".utf8)) == nil)
    }

    @Test("Firebase's auth:export: users, their modified-scrypt hashes under the project's config, phone, Google, disabled")
    func firebase() throws {
        let entries = try ImportFormat.firebase.entries(try ImportFixtures.data("firebase-users.json"), hashConfig: config)
        #expect(entries.count == 5)
        #expect(entries.last == .unreadable(externalID: "fb-broken"), "a record of the wrong shape is refused alone, by its id")
        let users = records(entries)
        let ana = try #require(users["fb-ana"])
        #expect(ana.email == "ana@fb.example" && ana.emailVerified && ana.displayName == "Ana Beridze")
        #expect(ana.createdAt == Date(timeIntervalSince1970: 1_609_459_200))
        guard case .hash(let encoded) = ana.password else { throw ImportTestFailure("a Firebase hash") }
        let hash = try #require(ForeignPasswordHash(encoded))
        #expect(hash.form == .firebaseScrypt)
        #expect(try hash.verify(try #require(ImportFixtures.passwords["fb-ana"])))
        #expect(try !hash.verify("amber-otter-18"))
        #expect(users["fb-dato"]?.disabled == true)
        #expect(users["fb-nino"]?.phone == "+995599123456" && users["fb-nino"]?.phoneVerified == true)
        #expect(users["fb-levan"]?.providers == [.init(provider: "google", subject: "google-subject-1001", email: "levan@fb.example")])
        // Without the project's config a hash cannot be checked.
        let bare = records(try ImportFormat.firebase.entries(try ImportFixtures.data("firebase-users.json")))
        #expect(bare["fb-ana"]?.password == .unsupported("firebase_scrypt"))
    }

    @Test("Auth0's bulk import: bcrypt, custom Argon2 and PBKDF2 (PHC) hashes, digests unsupported, Google identities")
    func auth0() throws {
        let users = records(try ImportFormat.auth0.entries(try ImportFixtures.data("auth0-users.json")))
        for id in ["auth0|bcrypt", "auth0|argon2", "auth0|pbkdf2"] {
            guard case .hash(let encoded) = users[id]?.password else { throw ImportTestFailure("\(id) has a hash") }
            #expect(try ForeignPasswordHash(encoded)?.verify(try #require(ImportFixtures.passwords[id])) == true, "\(id)")
        }
        #expect(users["auth0|bcrypt"]?.displayName == "Gio Kapanadze")
        #expect(users["auth0|md5"]?.password == .unsupported("md5"))
        let eka = try #require(users["google-oauth2|2002"])
        #expect(eka.phoneVerified && eka.providers == [.init(provider: "google", subject: "google-subject-2002")])
    }

    @Test("the ledger's JSON lines: a line that is not JSON is refused alone; blank lines are none")
    func jsonLines() throws {
        let data = try ImportFixtures.data("users.jsonl") + Data("\n   \n".utf8)
        let entries = try ImportFormat.jsonl.entries(data)
        #expect(entries.count == 9)
        #expect(entries[4] == .unreadable(externalID: nil))
        let users = records(entries)
        #expect(users["jl-django"]?.createdAt == Date(timeIntervalSince1970: 1_588_327_200))
        for id in ["jl-django", "jl-scrypt", "jl-2y"] {
            guard case .hash(let encoded) = users[id]?.password else { throw ImportTestFailure("\(id) has a hash") }
            #expect(try ForeignPasswordHash(encoded)?.verify(try #require(ImportFixtures.passwords[id])) == true, "\(id)")
        }
    }

    @Test("a Firebase time far off, or not a number, is no time (and stops nothing); an Auth0 user without user_id has no id")
    func hostileFields() throws {
        let users = try ImportFormat.firebase.entries(
            Data(
                (#"{"users": [{"localId": "a", "email": "a@example.org", "createdAt": "1e30"}, {"localId": "b", "createdAt": "nan"},"#
                    + #" {"localId": "c", "createdAt": "-5"}, {"localId": "d", "createdAt": "99999999999999999999"}]}"#).utf8))
        #expect(users.count == 4)
        #expect(records(users).values.allSatisfy { $0.createdAt == nil })
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1e30)).hasPrefix("9999-12-31"), "a far date is formatted, not a trap")
        let auth0 = try ImportFormat.auth0.entries(Data(#"[{"email": "x@example.org", "password_hash": "x"}]"#.utf8))
        guard case .record(let record) = auth0[0] else { throw ImportTestFailure("a record") }
        #expect(record.externalID.isEmpty, "never the address in the id's place")
    }

    @Test("a file that is not the format's shape at all will not read")
    func unreadableFiles() {
        #expect(throws: ImportFormat.Unreadable.self) { try ImportFormat.firebase.entries(Data("[1,2]".utf8)) }
        #expect(throws: ImportFormat.Unreadable.self) { try ImportFormat.auth0.entries(Data("{\"users\": []}".utf8)) }
        #expect(throws: ImportFormat.Unreadable.self) { try ImportFormat.auth0.entries(Data([0xff, 0x00, 0x12])) }
    }
}

struct ImportTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
