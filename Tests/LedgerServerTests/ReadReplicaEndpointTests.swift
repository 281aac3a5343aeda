import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerCore
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import Testing

@Suite("HTTP: readers on a standby (LEDGER_READ_DATABASE_URL)", .timeLimit(.minutes(3)))
struct ReadReplicaEndpointTests {
    @Test("GET /events reads the standby: what it has, never a gap, caught up after a pause; /readyz says how far behind it is")
    func eventsFromStandby() async throws {
        try await TestReplication.withPrimaryAndStandby { primary, standby in
            let services = try makeServices(url: "", client: primary, clock: ManualClock(Date()), readClient: standby)
            try await Application(router: buildRouter(services)).test(.router) { client in
                let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
                func feedTypes() async throws -> [String] {
                    let page = try await call(client, .get, "/events?limit=1000", token: reader)
                    return (page.body["events"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? String }
                }
                func waitFor(_ count: Int) async throws -> [String] {
                    let deadline = ContinuousClock.now + .seconds(30)
                    var types = try await feedTypes()
                    while types.filter({ $0 == "account.registered" }).count < count && ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(50))
                        types = try await feedTypes()
                    }
                    return types
                }
                _ = try await signUp(client, email: "ana@example.com")
                #expect(try await waitFor(1).filter { $0 == "account.registered" }.count == 1)
                let ready = try await call(client, .get, "/readyz")
                let replication = ready.body["replication"] as? [String: Any]
                #expect(ready.status == .ok && replication?["lag_bytes"] is Int)

                try await standby.query("SELECT pg_wal_replay_pause()")
                _ = try await signUp(client, email: "bo@example.com")
                let paused = try await feedTypes()
                #expect(paused.filter { $0 == "account.registered" }.count == 1)  // what it has, nothing half-seen
                try await standby.query("SELECT pg_wal_replay_resume()")
                #expect(try await waitFor(2).filter { $0 == "account.registered" }.count == 2)
            }
        }
    }
}
