import Foundation

/// Where the signing keys are kept (`PostgresSigningKeys`; `InMemorySigningKeys` in tests).
public protocol SigningKeyStore: Sendable {
    /// Every key, retired ones included.
    func all() async throws -> [SigningKeyRecord]
    func insert(_ record: SigningKeyRecord) async throws
    /// Erases the sealed private halves of `kids` (retired keys): nothing can sign with them again.
    func erasePrivateKeys(_ kids: [String]) async throws
}
