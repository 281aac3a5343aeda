import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LedgerApp
import LedgerCore
import LedgerEventStore
import LedgerPostgres
import LedgerServer
import LedgerTestSupport
import LedgerWorkers
import Testing

@Suite("HTTP: readers on a standby (LEDGER_READ_DATABASE_URL)", .timeLimit(.minutes(10)))
struct ReadReplicaEndpointTests {
    /// Samples until the standby has replayed everything the primary wrote and is read (real
    /// replication: polled against a deadline); false when it does not catch up in time.
    static func caughtUp(_ monitor: StandbyMonitor) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let status = await monitor.sample()
            if status.readingFrom == .standby && status.lagSeconds == 0 { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// The service on a primary and its hot standby, on a clock that stands still, after one
    /// sign-up the standby has replayed and reads: what the outage tests start from.
    static func withSignUpReplicated(
        _ body:
            @Sendable (
                _ client: any TestClientProtocol, LedgerServices, StandbyMonitor, ManualClock, _ standby: PostgresClient,
                _ primaryServer: LocalCluster
            ) async throws -> Void
    ) async throws {
        try await TestReplication.withClusters { primary, standby, primaryServer in
            let clock = ManualClock(Date())
            let services = try makeServices(url: "", client: primary, clock: clock, readClient: standby)
            let monitor = try #require(services.standbyMonitor)
            try await Application(router: buildRouter(services)).test(.router) { client in
                _ = try await signUp(client, email: "ana@example.com")
                #expect(try await Self.caughtUp(monitor))
                try await body(client, services, monitor, clock, standby, primaryServer)
            }
        }
    }

    @Test("GET /events reads the standby: what it has, never a gap, caught up after a pause; /readyz says how far behind it is")
    func eventsFromStandby() async throws {
        try await TestReplication.withPrimaryAndStandby { primary, standby in
            let services = try makeServices(url: "", client: primary, clock: ManualClock(Date()), readClient: standby)
            let monitor = try #require(services.standbyMonitor)
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
                #expect(try await Self.caughtUp(monitor))
                #expect(try await waitFor(1).filter { $0 == "account.registered" }.count == 1)
                let ready = try await call(client, .get, "/readyz")
                let replication = ready.body["replication"] as? [String: Any]
                #expect(ready.status == .ok && replication?["lag_bytes"] is Int)
                #expect(replication?["reading_from"] as? String == "standby" && replication?["reason"] is NSNull)

                // Within the bound (the clock stands still), a paused standby is still read.
                try await standby.query("SELECT pg_wal_replay_pause()")
                _ = try await signUp(client, email: "bo@example.com")
                #expect(await monitor.sample().readingFrom == .standby)
                let paused = try await feedTypes()
                #expect(paused.filter { $0 == "account.registered" }.count == 1)  // what it has, nothing half-seen
                try await standby.query("SELECT pg_wal_replay_resume()")
                #expect(try await waitFor(2).filter { $0 == "account.registered" }.count == 2)
            }
        }
    }

    @Test(
        "while no primary accepts writes: /readyz is 503 with database no_primary, the feed keeps answering from the standby (keys checked there, revoked ones refused), a write is 503 unavailable with Retry-After and never 500, /metrics still answers with database_up 0; past LEDGER_READ_FAILOVER_SECONDS the feed reads the primary; the primary back, writes go on with no restart"
    )
    func noPrimary() async throws {
        try await Self.withSignUpReplicated { client, services, monitor, clock, _, primaryServer in
            // Keys never checked before the outage: no instance has them cached.
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            let revoked = try await services.apiKeys.create(name: "revoked", scopes: [.eventsRead])
            #expect(try await services.apiKeys.revoke(revoked.id))
            try primaryServer.stopServer()
            #expect(await monitor.sample().readingFrom == .standby)
            // Every server refuses, so nothing commits: a standby that has everything the primary
            // wrote stays granted past LEDGER_READ_MAX_LAG_SECONDS, up to LEDGER_READ_FAILOVER_SECONDS.
            #expect(services.configuration.readFailoverSeconds > services.configuration.readMaxLagSeconds * 2)
            clock.advance(by: Double(services.configuration.readMaxLagSeconds) * 2)
            let status = await monitor.sample()
            #expect(status.readingFrom == .standby && status.lagSeconds == 0)
            let ready = try await call(client, .get, "/readyz")
            #expect(ready.status == .serviceUnavailable && ready.headers[.retryAfter] != nil)
            #expect(ready.body["error"] as? String == "not_ready" && ready.body["database"] as? String == "no_primary")
            let feed = try await call(client, .get, "/events?limit=100", token: reader)
            #expect(feed.status == .ok)
            #expect((feed.body["events"] as? [[String: Any]])?.contains { $0["type"] as? String == "account.registered" } == true)
            #expect(try await call(client, .get, "/events?limit=100", token: revoked.key).status == .unauthorized)
            let body: [String: Any] = ["email": "bo@example.com", "password": "violet-harbor-91"]
            let refused = try await call(client, .post, "/auth/email/signup", body)
            #expect(refused.status == .serviceUnavailable && refused.headers[.retryAfter] != nil)
            #expect(refused.body["error"] as? String == "unavailable")
            // Past the failover allowance the grant runs out, proof or not: a refusal is only libpq's view.
            clock.advance(by: Double(services.configuration.readFailoverSeconds))
            #expect(await monitor.sample().readingFrom == .primary)
            #expect(try await call(client, .get, "/events?limit=100", token: reader).status == .serviceUnavailable)
            try await Application(router: buildMetricsRouter(services.routerDependencies)).test(.router) { metrics in
                try await metrics.execute(uri: "/metrics", method: .get) { response in
                    let text = String(buffer: response.body)
                    #expect(response.status == .ok)
                    #expect(text.contains("ledger_database_up 0.0") || text.contains("ledger_database_up 0\n"))
                    #expect(text.contains("ledger_readers_on_standby 1"))
                }
            }

            try primaryServer.startServer()
            var answer = HTTPResponse.Status.serviceUnavailable
            let deadline = ContinuousClock.now + .seconds(15)
            while answer != .created && ContinuousClock.now < deadline {
                answer = try await call(client, .post, "/auth/email/signup", body).status
                #expect(answer == .created || answer == .serviceUnavailable)
                if answer != .created { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(answer == .created)
            #expect(try await call(client, .get, "/readyz").status == .ok)
        }
    }

    @Test(
        "while no primary answers, a standby that lacks what the primary last wrote keeps only the grant it had: past the bound the feed reads the primary, a 503 and never a 500"
    )
    func noPrimaryStandbyBehind() async throws {
        try await Self.withSignUpReplicated { client, services, monitor, clock, standby, primaryServer in
            let reader = try await services.apiKeys.create(name: "reader", scopes: [.eventsRead]).key
            try await standby.query("SELECT pg_wal_replay_pause()")
            _ = try await signUp(client, email: "bo@example.com")
            #expect(await monitor.sample().readingFrom == .standby)  // within the bound still
            try primaryServer.stopServer()
            clock.advance(by: Double(services.configuration.readMaxLagSeconds) + 1)
            let status = await monitor.sample()
            #expect(status.readingFrom == .primary && status.reason == .primaryUnreachable)
            let feed = try await call(client, .get, "/events?limit=100", token: reader)
            #expect(feed.status == .serviceUnavailable && feed.body["error"] as? String == "unavailable")
            try primaryServer.startServer()
            try await standby.query("SELECT pg_wal_replay_resume()")
        }
    }

    @Test(
        "while a listed server cannot be reached in time (a partition from a primary that may still commit and purge), the standby keeps only the grant it had"
    )
    func partitionedPrimary() async throws {
        try await TestReplication.withClusters { _, standby, primaryServer in
            let silent = try SilentListener()
            // The primary, then a server that never answers: once the primary stops, libpq's
            // attempt ends in a refusal and a timeout, which proves nothing about the second.
            let primary = PostgresClient(
                configuration: .init(
                    url:
                        "postgresql://postgres@127.0.0.1:\(primaryServer.port),127.0.0.1:\(silent.port)/ledger?target_session_attrs=read-write&connect_timeout=2",
                    maximumConnections: 2))
            let clock = ManualClock(Date())
            let monitor = StandbyMonitor(
                route: StandbyRoute(primary: primary, standby: standby, clock: clock), maxLagSeconds: 10, clock: clock)
            #expect(try await Self.caughtUp(monitor))
            try primaryServer.stopServer()
            clock.advance(by: 5)
            #expect(await monitor.sample().readingFrom == .standby)  // the grant it had runs 10 s
            clock.advance(by: 6)
            let status = await monitor.sample()
            #expect(status.readingFrom == .primary && status.reason == .primaryUnreachable)
            try primaryServer.startServer()
            await primary.shutdown()
            withExtendedLifetime(silent) {}
        }
    }

    @Test(
        "the readers are held to the server the monitor measured: a connection that reaches another fails, and the reads go to the primary until that one is measured"
    )
    func readersPinned() async throws {
        try await TestReplication.withClusters { primary, standby, primaryServer in
            // The readers' pool reaches the primary, as libpq may settle on another host of a
            // multi-host URL; the monitor measures the standby.
            let readers = PostgresClient(configuration: .init(url: primaryServer.url, maximumConnections: 2))
            let measuring = PostgresClient(configuration: .init(url: standby.configuration.url, maximumConnections: 1))
            let clock = ManualClock(Date())
            let route = StandbyRoute(primary: primary, standby: readers, clock: clock)
            let monitor = StandbyMonitor(route: route, maxLagSeconds: 10, measuring: measuring, clock: clock)
            #expect(try await Self.caughtUp(monitor))
            let measured = try await standby.query("SELECT \(PostgresClient.serverIdentityExpression)").rows.first?.string(0)
            #expect(measured != nil && readers.requiredServer == measured && route.readsStandby)
            await #expect(throws: PostgresError.self) { try await route.client.query("SELECT 1") }
            #expect(!route.readsStandby && monitor.status().readingFrom == .primary)
            #expect(try await route.client.query("SELECT 1").rowCount == 1)  // the primary, now
            await readers.shutdown()
            await measuring.shutdown()
        }
    }

    @Test("a readers' standby promoted by a failover is no standby: reads go to the primary and the readers' pool reconnects")
    func promotedStandby() async throws {
        try await TestReplication.withClusters { primary, standby, _ in
            let services = try makeServices(url: "", client: primary, clock: ManualClock(Date()), readClient: standby)
            let monitor = try #require(services.standbyMonitor)
            #expect(try await Self.caughtUp(monitor))
            let before = try await standby.query("SELECT pg_backend_pid()::text").rows.first?.string(0)
            try await standby.query("SELECT pg_promote(true, 30)")
            let status = await monitor.sample()
            #expect(status.readingFrom == .primary && status.reason == .notAStandby)
            let after = try await standby.query("SELECT pg_backend_pid()::text").rows.first?.string(0)
            #expect(before != nil && after != nil && before != after)
        }
    }

    /// With no standby to ask, a primary that cannot be reached is `unreachable`, not `no_primary`.
    @Test("a primary that is gone, with no standby configured, makes /readyz 503 with database unreachable")
    func unreachable() async throws {
        try await TestReplication.withClusters { primary, _, primaryServer in
            let services = try makeServices(url: "", client: primary, clock: ManualClock(Date()))
            try await Application(router: buildRouter(services)).test(.router) { client in
                #expect(try await call(client, .get, "/readyz").status == .ok)
                try primaryServer.stopServer()
                let ready = try await call(client, .get, "/readyz")
                #expect(ready.status == .serviceUnavailable && ready.body["database"] as? String == "unreachable")
                try primaryServer.startServer()
            }
        }
    }

    @Test(
        "past LEDGER_READ_MAX_LAG_SECONDS a paused standby is not read: an account it has not seen purged is served redacted from the primary, /readyz says why; caught up, it is read again"
    )
    func lagBound() async throws {
        try await TestReplication.withPrimaryAndStandby { primary, standby in
            let clock = ManualClock(Date())
            let services = try makeServices(url: "", client: primary, clock: clock, readClient: standby) { $0.readMaxLagSeconds = 1 }
            let monitor = try #require(services.standbyMonitor)
            let auditor = try await services.apiKeys.create(name: "auditor", scopes: [.auditRead, .eventsRead]).key
            try await Application(router: buildRouter(services)).test(.router) { client in
                func replication() async throws -> [String: Any] {
                    try await call(client, .get, "/readyz").body["replication"] as? [String: Any] ?? [:]
                }
                // Before the first measurement the readers read the primary.
                #expect(try await replication()["reading_from"] as? String == "primary")
                #expect(try await replication()["reason"] as? String == "not_measured")

                let access = try await signUp(client, email: "ana@example.com")
                let accountID = try #require(try await call(client, .get, "/me", token: access).string("account_id"))
                let grant = try await passwordGrant(client, token: access)
                #expect(try await call(client, .delete, "/me", token: access, reauth: grant).status == .accepted)
                clock.advance(by: services.configuration.policies.purgeDelay + 1)
                func history() async throws -> [[String: Any]] {
                    let answer = try await call(
                        client, .get, "/accounts/\(accountID)/events", token: auditor, path: "/accounts/{id}/events")
                    return answer.body["events"] as? [[String: Any]] ?? []
                }
                func lifecycle() async throws -> String? {
                    let answer = try await call(client, .get, "/accounts/\(accountID)/state", token: auditor, path: "/accounts/{id}/state")
                    return (answer.body["lifecycle"] as? [String: Any])?["status"] as? String
                }
                func registered() async throws -> [String: Any]? {
                    let page = try await call(client, .get, "/events?limit=1000", token: auditor)
                    return (page.body["events"] as? [[String: Any]])?.first { $0["type"] as? String == "account.registered" }
                }
                #expect(try await Self.caughtUp(monitor))
                #expect(try await history().allSatisfy { $0["redacted"] as? Bool == false })

                // The standby stops replaying; the purge commits on the primary.
                try await standby.query("SELECT pg_wal_replay_pause()")
                #expect(try await PurgeWorker(store: services.eventStore, clock: clock).purgeNext() == UUID(uuidString: accountID))
                // Within the bound the standby is still read (the clock stands still): it has not seen the purge.
                let within = await monitor.sample()
                #expect(within.readingFrom == .standby && within.lagSeconds == 0 && (within.lagBytes ?? 0) > 0)
                let stale = try await history()
                #expect(!stale.isEmpty && !stale.contains { $0["type"] as? String == "account.purged" })
                #expect(stale.allSatisfy { $0["redacted"] as? Bool == false })
                #expect(try await lifecycle() == "deleted")

                // Two seconds on it is past the bound: the grant has run out, and a measurement says why.
                clock.advance(by: 2)
                let lapsed = try await replication()
                #expect(lapsed["reading_from"] as? String == "primary" && lapsed["reason"] as? String == "measurement_stale")
                let behind = await monitor.sample()
                #expect(behind.readingFrom == .primary && behind.reason == .tooFarBehind && abs((behind.lagSeconds ?? 0) - 2) < 0.01)
                let bypassed = try await replication()
                #expect(bypassed["reading_from"] as? String == "primary" && bypassed["reason"] as? String == "too_far_behind")
                let bypassedLag = (bypassed["lag_seconds"] as? NSNumber)?.doubleValue ?? 0
                #expect(abs(bypassedLag - 2) < 0.01 && bypassed["max_lag_seconds"] as? Int == 1)
                #expect(try await call(client, .get, "/readyz").status == .ok)
                let fresh = try await history()
                #expect(fresh.count == stale.count + 1 && fresh.last?["type"] as? String == "account.purged")
                #expect(fresh.dropLast().allSatisfy { $0["redacted"] as? Bool == true && $0["data"] is NSNull })
                #expect(try await lifecycle() == "purged")
                let event = try #require(try await registered())
                #expect(event["redacted"] as? Bool == true && event["data"] is NSNull)

                // Replaying again, it catches up and is read again: the purge is there too.
                try await standby.query("SELECT pg_wal_replay_resume()")
                #expect(try await Self.caughtUp(monitor))
                let resumed = try await replication()
                #expect(resumed["reading_from"] as? String == "standby" && resumed["reason"] is NSNull)
                let replayed = try await history()
                #expect(replayed.count == fresh.count && replayed.last?["type"] as? String == "account.purged")
                #expect(replayed.dropLast().allSatisfy { $0["redacted"] as? Bool == true })
            }
        }
    }
}
