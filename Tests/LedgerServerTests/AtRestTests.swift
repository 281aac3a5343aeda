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
import NIOCore
import Testing

/// What the database holds, and what it must not: secrets only as hashes, codes and tokens
/// nowhere in the clear, personal data only under keys a purge destroys. These tests read the
/// tables themselves, so they run on PostgreSQL; each endpoint's behaviour is tested on memory
/// in its area's suite.
@Suite("PostgreSQL: what is stored at rest", .timeLimit(.minutes(10)))
struct AtRestTests {
    @Test("an API key is stored as its hash: the table holds nothing of the key, and the hash still finds it")
    func apiKeyHashed() async throws {
        try await TestPostgres.withDatabase { db in
            let services = try makeServices(url: db.url, client: db.client, clock: db.clock)
            let (_, key) = try await services.apiKeys.create(name: "bookings", scopes: [.sessionsIntrospect])
            #expect(
                try await db.client.query(
                    "SELECT count(*) FROM api_keys WHERE position(convert_to($1, 'UTF8') IN key_sha256) > 0", [.text(key)])[0].int(0) == 0)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let access = try await signUp(client, email: "ana@example.com")
                try await client.execute(
                    uri: "/sessions/introspect", method: .post, headers: bearer(key), body: jsonBody(["token": access])
                ) { response in
                    let body = try json(response)
                    #expect(body["active"] as? Bool == true)
                }
            }
        }
    }
}
