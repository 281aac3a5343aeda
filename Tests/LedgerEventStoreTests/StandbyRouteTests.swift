import Foundation
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import Testing

/// Which database a store reading through a `StandbyRoute` reads (docs/architecture.md
/// "Readers on a standby"); no database is reached.
@Suite("Event store: the readers' route to a standby")
struct StandbyRouteTests {
    @Test("the primary until the standby is granted; the standby until the grant runs out, then the primary again")
    func grants() async throws {
        let clock = ManualClock()
        let primary = PostgresClient(configuration: .init(url: "postgresql://127.0.0.1:1/primary", maximumConnections: 1))
        let standby = PostgresClient(configuration: .init(url: "postgresql://127.0.0.1:1/standby", maximumConnections: 1))
        let route = StandbyRoute(primary: primary, standby: standby, clock: clock)
        let store = EventStore(client: primary, keyring: SubjectKeyring(masterKey: try MasterKey.generate()), clock: clock)
        let readers = store.reading(through: route)
        #expect(!route.readsStandby && readers.client === primary)
        route.readStandby(until: clock.now().addingTimeInterval(2))
        #expect(route.readsStandby && readers.client === standby)
        clock.advance(by: 2)
        #expect(readers.client === standby)
        clock.advance(by: 0.001)
        #expect(!route.readsStandby && readers.client === primary)
        route.readStandby(until: clock.now().addingTimeInterval(60))
        route.readStandby(until: nil)
        #expect(readers.client === primary)
        // The writing store is never routed.
        #expect(store.client === primary)
        await primary.shutdown()
        await standby.shutdown()
    }
}
