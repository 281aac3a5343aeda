import Foundation
import LedgerTestSupport
import Testing

@Suite("ledger serve: development mode", .timeLimit(.minutes(2)))
struct DevelopmentModeTests {
    @Test("without LEDGER_MASTER_KEY, serve refuses to start, unless --dev: then it migrates and seals with the development key")
    func devFlag() async throws {
        try await TestPostgres.withDatabase(migrated: false) { db in
            let server = try ServerUnderTest(databaseURL: db.url, environment: ["LEDGER_MASTER_KEY": ""])
            let (status, output) = try await server.ledger(["serve", "--host", "127.0.0.1"])
            #expect(status != 0)
            #expect(output.contains("set LEDGER_MASTER_KEY"))
            #expect(output.contains("--dev"))
            do {
                try await server.start(["--dev"])
                _ = try await server.signUp(0)
                #expect(server.process?.output.contains("DEVELOPMENT MODE (--dev)") == true)
            } catch {
                try? await server.shutdown()
                throw error
            }
            try await server.shutdown()
            let sealed = try await db.client.query("SELECT count(*) FROM events WHERE subject_id IS NOT NULL")
            #expect(try sealed[0].int(0) ?? 0 > 0)
        }
    }
}
