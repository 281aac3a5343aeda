import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres
import LedgerTestSupport
import Testing

@testable import LedgerEventStore

/// The keyring's cache of unwrapped data keys around a purge (docs/architecture.md "Event
/// store rules": crypto-shredding).
@Suite("Event store: the data-key cache")
struct SubjectKeyringTests {
    @Test("a key read while its destruction commits is not cached after it: the purged key does not stay in memory")
    func destroyedWhileRead() async throws {
        try await TestPostgres.withDatabase { db in
            let store = db.eventStore()
            let subject = try await IntegrityTests.seed(store)
            #expect(store.keyring.cachedKey(for: subject) != nil)
            try await db.client.transaction { connection in
                #expect(try await store.keyring.destroy(subjectID: subject, at: db.clock.now(), on: connection))
                // Another connection still sees the key (the destruction is not committed): a
                // writer that reads it now must not put it back in the cache.
                _ = try await db.client.withConnection { try await store.keyring.dataKey(for: subject, on: $0) }
            }
            #expect(store.keyring.cachedKey(for: subject) == nil)
            let refused = await #expect(throws: EventStoreError.self) {
                try await db.client.withConnection { try await store.keyring.dataKey(for: subject, on: $0) }
            }
            #expect(refused?.code == .subjectKeyDestroyed)
            #expect(try await store.readStream(subject).allSatisfy(\.isRedacted))
        }
    }
}
