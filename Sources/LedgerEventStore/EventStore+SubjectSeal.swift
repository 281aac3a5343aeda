import Foundation
import LedgerCrypto
import LedgerPostgres

extension EventStore {
    /// Seals personal data kept beside a stream rather than in it (an account's picture) under
    /// the subject's data key, bound to `binding` (what it is and whose): destroying the key at
    /// the purge leaves it unreadable, as it does the events. The caller holds the stream's
    /// lock (`SubjectKeyring.dataKey(for:on:)`); nil, sealing nothing, when the key is gone.
    public func seal(_ bytes: [UInt8], subjectID: UUID, binding: [UInt8], on connection: PostgresConnection) async throws -> [UInt8]? {
        guard let key = try await keyring.liveKeys(for: [subjectID], on: connection)[subjectID] else { return nil }
        return try key.seal(bytes, associatedData: binding)
    }

    /// Opens what `seal` sealed with the same binding; nil when the subject's key is gone.
    public func open(_ sealed: [UInt8], subjectID: UUID, binding: [UInt8], on connection: PostgresConnection) async throws -> [UInt8]? {
        guard let key = try await keyring.liveKeys(for: [subjectID], on: connection)[subjectID] else { return nil }
        return try key.open(sealed, associatedData: binding)
    }
}
