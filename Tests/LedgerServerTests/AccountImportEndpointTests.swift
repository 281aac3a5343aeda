import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerAccounts
import LedgerApp
import LedgerServer
import LedgerTestSupport
import Testing

@Suite("HTTP: importing accounts", .timeLimit(.minutes(10)))
struct AccountImportEndpointTests {
    static let path = "/admin/accounts/import"

    static func firebaseBody() throws -> [String: Any] {
        let users = try #require(
            try JSONSerialization.jsonObject(with: ImportFixtures.data("firebase-users.json")) as? [String: Any])["users"]
        let config = try JSONSerialization.jsonObject(with: ImportFixtures.data("firebase-hash-config.json"))
        return ["format": "firebase", "users": try #require(users), "hash_config": config]
    }

    @Test("accounts:import brings Firebase's users in with their passwords; the same call again skips them; each signs in")
    func importsFirebase() async throws {
        try await MemoryBackend.with { db in
            let importer = try await db.apiKeys.create(name: "migration", scopes: [.accountsImport]).key
            try await testApplication(db).test(.router) { client in
                let answer = try await call(client, .post, Self.path, try Self.firebaseBody(), token: importer)
                #expect(answer.status == .ok)
                #expect(answer.body["imported"] as? Int == 4 && answer.body["skipped"] as? Int == 0)
                let refused = try #require(answer.body["refused"] as? [[String: Any]])
                #expect(refused.count == 1 && refused[0]["index"] as? Int == 4 && refused[0]["external_id"] as? String == "fb-broken")
                #expect(refused[0]["reason"] as? String == "invalid_record")
                #expect((answer.body["accounts"] as? [[String: Any]])?.count == 4)
                let again = try await call(client, .post, Self.path, try Self.firebaseBody(), token: importer)
                #expect(again.body["imported"] as? Int == 0 && again.body["skipped"] as? Int == 4)
                #expect(try await db.queuedMessages(template: nil).isEmpty, "imported accounts get no message")
                let password = try #require(ImportFixtures.passwords["fb-ana"])
                let login = try await call(client, .post, "/auth/email/login", ["email": "ana@fb.example", "password": password])
                #expect(login.status == .ok)
                let me = try await call(client, .get, "/me", token: try #require(login.string("access_token")))
                #expect(me.string("display_name") == "Ana Beridze")
                let disabled = try await call(
                    client, .post, "/auth/email/login",
                    ["email": "dato@fb.example", "password": try #require(ImportFixtures.passwords["fb-dato"])])
                #expect(disabled.status == .forbidden && disabled.string("error") == "account_disabled")
            }
        }
    }

    @Test("only a key with accounts:import (or admin) imports: another scope is 403, no key or a wrong one 401")
    func scopes() async throws {
        try await MemoryBackend.with { db in
            let support = try await db.apiKeys.create(name: "support", scopes: [.accountsAdmin]).key
            let admin = try await db.apiKeys.create(name: "ops", scopes: [.admin]).key
            try await testApplication(db).test(.router) { client in
                let body: [String: Any] = ["format": "jsonl", "users": [["external_id": "x", "email": "x@example.org"]]]
                #expect(try await call(client, .post, Self.path, body, token: support).status == .forbidden)
                #expect(try await call(client, .post, Self.path, body, token: "lk_wrong").status == .unauthorized)
                #expect(try await call(client, .post, Self.path, body).status == .unauthorized)
                // An end user's access token is no key.
                let access = try await signUp(client, email: "ana@example.com")
                #expect(try await call(client, .post, Self.path, body, token: access).status == .unauthorized)
                #expect(try await call(client, .post, Self.path, body, token: admin).body["imported"] as? Int == 1)
            }
        }
    }

    @Test("bad bodies are 4xx and import nothing: more than 1000 records 413, no format 422, not JSON 400, a dry run writes nothing")
    func badBodies() async throws {
        try await MemoryBackend.with { db in
            let key = try await db.apiKeys.create(name: "migration", scopes: [.accountsImport]).key
            try await testApplication(db).test(.router) { client in
                let many = (0...1000).map { ["external_id": "r\($0)", "email": "r\($0)@example.org"] }
                let tooMany = try await call(client, .post, Self.path, ["format": "jsonl", "users": many], token: key)
                #expect(tooMany.status == .contentTooLarge && tooMany.string("error") == "payload_too_large")
                let invalid = try await call(
                    client, .post, Self.path,
                    ["format": "csv", "users": [], "hash_config": ["algorithm": "MD5"], "dry_run": "yes", "source": ""], token: key)
                #expect(invalid.status == .unprocessableContent)
                #expect(Set(invalid.problemCodes) == ["invalid_format", "invalid_hash_config", "invalid_type", "invalid_source"])
                #expect(try await call(client, .post, Self.path, ["format": "jsonl"], token: key).status == .badRequest)
                // A bare string where the config's object goes (the console's text pasted) is a 422, not a stopped process.
                for config: Any in ["hash_config { algorithm: SCRYPT }", 14, true] {
                    let answer = try await call(
                        client, .post, Self.path, ["format": "firebase", "users": [], "hash_config": config], token: key)
                    #expect(answer.status == .unprocessableContent && answer.problemCodes == ["invalid_hash_config"])
                }
                let notJSON = try await client.execute(
                    uri: Self.path, method: .post, headers: bearer(key), body: ByteBuffer(string: "users,email\n1,a@b.c")
                ) { $0.status }
                #expect(notJSON == .badRequest)
                // Over 64 KiB is allowed here (1000 records), over 8 MiB is not.
                let big = (0..<1000).map {
                    ["external_id": "b\($0)", "email": "b\($0)@example.org", "display_name": String(repeating: "n", count: 90)]
                }
                let dry = try await call(client, .post, Self.path, ["format": "jsonl", "users": big, "dry_run": true], token: key)
                #expect(dry.status == .ok && dry.body["imported"] as? Int == 1000 && (dry.body["accounts"] as? [Any])?.isEmpty == true)
                let huge = try await client.execute(
                    uri: Self.path, method: .post, headers: bearer(key),
                    body: ByteBuffer(string: "{\"format\":\"jsonl\",\"users\":[\"" + String(repeating: "x", count: 9 << 20) + "\"]}")
                ) { $0.status }
                #expect(huge == .contentTooLarge)
                #expect(try await db.storedEventCount(type: "account.imported") == 0)
            }
        }
    }
}
