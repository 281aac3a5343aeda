import Foundation
import JWTKit
import LedgerAccounts
import LedgerAccountsPostgres
import LedgerCore
import LedgerCrypto
import LedgerTestSupport
import Testing

/// Signing keys on PostgreSQL: made, sealed, rotated, their private halves erased once retired.
@Suite("Signing keys: on PostgreSQL", .timeLimit(.minutes(2)))
struct PostgresSigningKeysTests {
    static func keys(_ db: TestDatabase, masterKey: MasterKey? = nil) -> SigningKeys {
        SigningKeys(
            store: PostgresSigningKeys(client: db.client), masterKey: masterKey ?? db.masterKey, clock: db.clock, tokenLifetime: 900,
            activationDelay: 600)
    }

    @Test("rotate publishes a new key at once and signs with it after the delay; the old one retires and its private half goes")
    func rotateAndRetire() async throws {
        try await TestPostgres.withDatabase { db in
            let keys = Self.keys(db)
            try await keys.ensureSigningKey()
            try await keys.ensureSigningKey()
            let first = try #require(try await keys.schedule().signing(at: db.clock.now()))
            #expect(try await keys.schedule().keys.count == 1)

            let second = try await keys.rotate()
            var schedule = try await keys.schedule()
            #expect(schedule.signing(at: db.clock.now())?.kid == first.kid)
            #expect(schedule.published(at: db.clock.now()).map(\.kid) == [first.kid, second.kid])

            db.clock.advance(by: 600)
            schedule = try await keys.schedule()
            #expect(schedule.signing(at: db.clock.now())?.kid == second.kid)
            #expect(schedule.state(of: first, at: db.clock.now()) == .retiring)

            // Once the first key's last token has expired (and the minute's margin), the next
            // rotation erases its private half.
            db.clock.advance(by: 960)
            try await keys.rotate()
            let stored = try await PostgresSigningKeys(client: db.client).all()
            #expect(stored.first { $0.kid == first.kid }?.sealedKey == nil)
            #expect(stored.filter { $0.sealedKey != nil }.count == 2)
            #expect(throws: CryptoError.self) { try keys.privateKey(stored.first { $0.kid == first.kid }!) }
        }
    }

    @Test("the private key is stored sealed: no PEM in the table, and another master key or another row's kid does not open it")
    func sealedUnderTheMasterKey() async throws {
        try await TestPostgres.withDatabase { db in
            let keys = Self.keys(db)
            let record = try await keys.rotate()
            let privateKey = try keys.privateKey(record)
            #expect(privateKey.publicKey.parameters?.x == record.x)

            let stored = try #require(try await db.client.query("SELECT sealed_key FROM signing_keys").rows.first?.bytes(0))
            #expect(stored.firstRange(of: Array("-----BEGIN".utf8)) == nil)
            #expect(stored.firstRange(of: Array(privateKey.pemRepresentation.utf8.dropFirst(40).prefix(24))) == nil)
            #expect(throws: CryptoError.self) { try Self.keys(db, masterKey: try MasterKey.generate()).privateKey(record) }
            // A rotation under another master key is refused: no instance could open its key.
            await #expect(throws: CryptoError.self) { try await Self.keys(db, masterKey: try MasterKey.generate()).rotate() }
            let moved = SigningKeyRecord(
                kid: "another", sealedKey: record.sealedKey, masterKeyID: record.masterKeyID, x: record.x, y: record.y,
                createdAt: record.createdAt, activatesAt: record.activatesAt)
            #expect(throws: CryptoError.self) { try keys.privateKey(moved) }
        }
    }
}
