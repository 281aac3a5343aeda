import Foundation
import LedgerCrypto
import LedgerPostgres
import LedgerTestSupport
import Testing

/// `ledger import` as an operator runs it: exit codes, the report, and a `kill -9` mid-run
/// followed by a rerun that imports every record exactly once.
@Suite("ledger import", .timeLimit(.minutes(10)))
struct ImportCommandTests {
    static func environment(_ db: TestDatabase) -> [String: String] {
        ["DATABASE_URL": db.url, "LEDGER_MASTER_KEY": db.masterKey.base64, "LOG_LEVEL": "warning"]
    }

    static func count(_ db: TestDatabase, _ sql: String) async throws -> Int {
        Int(try await db.client.query(sql)[0].string(0) ?? "") ?? -1
    }

    @Test("exit 0 when nothing is refused, 1 when a record is, 2 when the file cannot be read; --report has a line a record")
    func exitCodesAndReport() async throws {
        try await TestPostgres.withDatabase { db in
            let environment = Self.environment(db)
            let missing = try await LedgerProcess.run(
                ["import", "/nonexistent/users.json", "--format", "firebase"], environment: environment)
            #expect(missing.status == 2 && missing.output.contains("cannot read"), "\(missing.output)")
            let notFirebase = try await LedgerProcess.run(
                ["import", ImportFixtures.path("auth0-users.json"), "--format", "firebase"], environment: environment)
            #expect(notFirebase.status == 2 && notFirebase.output.contains("not a Firebase auth:export file"), "\(notFirebase.output)")

            let report = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).jsonl").path
            defer { unlink(report) }
            let dry = try await LedgerProcess.run(
                ["import", ImportFixtures.path("users.jsonl"), "--format", "jsonl", "--dry-run"], environment: environment)
            #expect(dry.status == 1 && dry.output.contains("imported 4, skipped 0, refused 5 (dry run: nothing was written)"))
            #expect(try await Self.count(db, "SELECT count(*) FROM events") == 0)

            let run = try await LedgerProcess.run(
                ["import", ImportFixtures.path("users.jsonl"), "--format", "jsonl", "--report", report], environment: environment)
            #expect(run.status == 1 && run.output.contains("imported 4, skipped 0, refused 5"), "\(run.output)")
            let mode = try FileManager.default.attributesOfItem(atPath: report)[.posixPermissions] as? Int
            #expect(mode == 0o600, "the report is its owner's only")
            let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(lines.count == 9)
            #expect(lines.map { $0["index"] as? Int } == Array(0..<9))
            #expect(lines[0]["outcome"] as? String == "imported" && lines[0]["account_id"] is String)
            #expect(lines[4]["outcome"] as? String == "refused" && lines[4]["reason"] as? String == "invalid_record")
            #expect(lines.filter { $0["reason"] as? String == "unsupported_hash" }.map { $0["external_id"] as? String } == ["jl-md5"])

            let firebase = try await LedgerProcess.run(
                [
                    "import", ImportFixtures.path("firebase-users.json"), "--format", "firebase", "--hash-config",
                    ImportFixtures.path("firebase-hash-config.txt"), "--source", "firebase-prod",
                ], environment: environment)
            #expect(firebase.status == 1 && firebase.output.contains("imported 4, skipped 0, refused 1"), "\(firebase.output)")
            // Clean records only: exit 0, and again: every one skipped, still 0.
            let clean = FileManager.default.temporaryDirectory.appendingPathComponent("clean-\(UUID().uuidString).jsonl").path
            defer { unlink(clean) }
            try Data(#"{"external_id":"c1","email":"c1@example.org"}"#.utf8 + [10] + #"{"external_id":"c2","email":"c2@example.org"}"#.utf8)
                .write(to: URL(fileURLWithPath: clean))
            let first = try await LedgerProcess.run(["import", clean, "--format", "jsonl"], environment: environment)
            #expect(first.status == 0 && first.output.contains("imported 2, skipped 0, refused 0"), "\(first.output)")
            let second = try await LedgerProcess.run(["import", clean, "--format", "jsonl"], environment: environment)
            #expect(second.status == 0 && second.output.contains("imported 0, skipped 2, refused 0"), "\(second.output)")
        }
    }

    @Test("kill -9 mid-import, then the same command again: every record is in exactly once, no account half-imported")
    func killedAndRerun() async throws {
        try await TestPostgres.withDatabase { db in
            let total = 12_000
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("many-\(UUID().uuidString).jsonl").path
            defer { unlink(file) }
            var text = ""
            for index in 0..<total {
                let phone = index % 3 == 0 ? #","phone":"+9955\#(String(format: "%08d", index))","phone_verified":true"# : ""
                text += #"{"external_id":"u\#(index)","email":"u\#(index)@example.org","email_verified":true\#(phone)}"# + "\n"
            }
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let arguments = ["import", file, "--format", "jsonl", "--jobs", "2"]
            let importer = try LedgerProcess(arguments, environment: Self.environment(db))
            let deadline = ContinuousClock.now + .seconds(120)
            while try await Self.count(db, "SELECT count(*) FROM account_imports") < 2_000, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            await importer.kill()
            let committed = try await Self.count(db, "SELECT count(*) FROM account_imports")
            #expect(committed >= 2_000 && committed < total, "killed mid-run: \(committed) of \(total)")
            #expect(try await Self.count(db, "SELECT count(*) FROM accounts") == committed, "no account without its import record")

            let rerun = try await LedgerProcess.run(arguments, environment: Self.environment(db))
            #expect(rerun.status == 0, "\(rerun.output)")
            #expect(rerun.output.contains("imported \(total - committed), skipped \(committed), refused 0"), "\(rerun.output)")
            #expect(try await Self.count(db, "SELECT count(*) FROM account_imports") == total)
            #expect(try await Self.count(db, "SELECT count(*) FROM accounts") == total)
            #expect(try await Self.count(db, "SELECT count(DISTINCT stream_id) FROM events") == total)
            #expect(try await Self.count(db, "SELECT count(*) FROM events WHERE event_type = 'account.imported'") == total)
            #expect(
                try await Self.count(
                    db,
                    "SELECT count(*) FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM account_imports i WHERE i.account_id = a.account_id)")
                    == 0)
        }
    }
}
