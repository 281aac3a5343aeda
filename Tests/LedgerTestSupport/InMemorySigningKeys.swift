import Foundation
import LedgerAccounts
import Synchronization

/// The signing keys in this process, for the tests that run without PostgreSQL.
public final class InMemorySigningKeys: SigningKeyStore {
    private let records = Mutex<[SigningKeyRecord]>([])

    public init() {}

    public func all() async throws -> [SigningKeyRecord] {
        records.withLock { $0 }
    }

    public func insert(_ record: SigningKeyRecord) async throws {
        records.withLock { $0.append(record) }
    }

    public func erasePrivateKeys(_ kids: [String]) async throws {
        records.withLock { records in
            for index in records.indices where kids.contains(records[index].kid) { records[index].sealedKey = nil }
        }
    }
}
