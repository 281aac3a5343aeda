import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import Synchronization

/// `APIKeyAuthority` in one process's memory, for the HTTP tests without a database: keys as
/// `APIKeys` makes them (a random `lk_` key, stored by its SHA-256 with its scopes).
public final class InMemoryAPIKeys: APIKeyAuthority {
    private let keys = Mutex<[[UInt8]: AuthorizedKey]>([:])

    public init() {}

    /// A new key with `scopes`: its id and the key itself, as `APIKeys.create` answers.
    public func create(name: String, scopes: [APIKeyScope]) async throws -> (id: UUID, key: String) {
        let key = "lk_" + Base64URL.encode(try SecureRandom.bytes(32))
        let hash = SHA256.hash(Array(key.utf8))
        let id = UUID.random()
        keys.withLock { $0[hash] = AuthorizedKey(id: id, hash: hash, scopes: Set(scopes.map(\.rawValue))) }
        return (id, key)
    }

    /// Returns false when no key has that id.
    public func revoke(_ id: UUID) async throws -> Bool {
        keys.withLock { keys in keys.removeValue(forKey: keys.first { $0.value.id == id }?.key ?? []) != nil }
    }

    public func authorize(_ key: String, scope: APIKeyScope) async throws -> AuthorizedKey {
        guard let authorized = keys.withLock({ $0[SHA256.hash(Array(key.utf8))] }) else { throw APIKeyError.unknown }
        guard authorized.allows(scope) else { throw APIKeyError.missingScope }
        return authorized
    }
}
