import Foundation
import LedgerAccounts
import LedgerCore
import LedgerCrypto
import LedgerEventStore
import LedgerPostgres
import Synchronization

/// Scoped API keys for services: created and listed by the CLI, checked on every service call.
public struct APIKeys: APIKeyAuthority {
    /// What a key may do.
    public typealias Scope = APIKeyScope
    /// A live key that passed `authorize`.
    public typealias Authorized = AuthorizedKey

    public struct Key: Sendable, Equatable {
        public let id: UUID
        public let name: String
        public let scopes: [String]
        public let createdAt: Date
        public let revokedAt: Date?
    }

    let client: PostgresClient
    /// The readers' route (`LEDGER_READ_DATABASE_URL`), when there is one: while no primary
    /// answers (a failover), a key is checked on the standby the route still grants.
    let standby: StandbyRoute?
    let clock: any LedgerClock
    /// Live keys' scopes, remembered briefly so a busy backend does not cost a query per call;
    /// a revocation therefore takes effect within `APIKeys.cacheLifetime` on every instance.
    private let cache = ScopeCache()
    public static let cacheLifetime: Duration = .seconds(5)

    public init(client: PostgresClient, clock: any LedgerClock, standby: StandbyRoute? = nil) {
        self.client = client
        self.clock = clock
        self.standby = standby
    }

    /// Creates a key; returns its id and the key itself, which is never stored.
    public func create(name: String, scopes: [Scope]) async throws -> (id: UUID, key: String) {
        let key = "lk_" + Base64URL.encode(try SecureRandom.bytes(32))
        let id = UUID.random()
        try await client.query(
            "INSERT INTO api_keys (id, name, key_sha256, scopes, created_at) VALUES ($1, $2, $3, $4::text[], $5)",
            [
                .uuid(id), .text(name), .bytea(SHA256.hash(Array(key.utf8))),
                .textArray(scopes.map(\.rawValue)), .timestamp(clock.now()),
            ])
        return (id, key)
    }

    public func list() async throws -> [Key] {
        try await client.query("SELECT id, name, array_to_string(scopes, ','), created_at, revoked_at FROM api_keys ORDER BY created_at")
            .rows.map { row in
                Key(
                    id: try row.uuid(0)!, name: row.string(1) ?? "", scopes: (row.string(2) ?? "").split(separator: ",").map(String.init),
                    createdAt: try row.date(3)!, revokedAt: try row.date(4))
            }
    }

    /// Returns false when no live key has that id.
    public func revoke(_ id: UUID) async throws -> Bool {
        try await client.query(
            "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL", [.uuid(id), .timestamp(clock.now())]
        ).affectedRows == 1
    }

    /// Whether `key` is live and has `scope` (or `admin`). Throws `unknown` for a wrong or
    /// revoked key, `missingScope` for a key without the scope.
    @discardableResult
    public func authorize(_ key: String, scope: Scope) async throws -> Authorized {
        let hash = SHA256.hash(Array(key.utf8))
        let authorized: Authorized
        if let cached = cache.get(hash) {
            authorized = cached
        } else {
            let rows = try await liveKey(hash)
            guard rows.rowCount == 1, let id = try rows[0].uuid(0) else { throw APIKeyError.unknown }
            authorized = Authorized(id: id, hash: hash, scopes: Set((rows[0].string(1) ?? "").split(separator: ",").map(String.init)))
            cache.set(authorized)
        }
        guard authorized.allows(scope) else { throw APIKeyError.missingScope }
        return authorized
    }

    /// The live key with `hash`, from the primary; while the primary cannot answer, from the
    /// standby the readers' route grants. A revocation committed on the primary is on that
    /// standby within the route's lag bound, as every purge is (docs/operations.md "High
    /// availability on Patroni"), so a revoked key is refused there as late as a read of purged
    /// data would be, and a feed reader keeps reading through a failover.
    private func liveKey(_ hash: [UInt8]) async throws -> PostgresResult {
        let query = "SELECT id, array_to_string(scopes, ',') FROM api_keys WHERE key_sha256 = $1 AND revoked_at IS NULL"
        do {
            return try await client.query(query, [.bytea(hash)])
        } catch let failure as PostgresError where failure.isTemporarilyUnavailable {
            guard let standby, standby.readsStandby else { throw failure }
            return try await standby.standby.query(query, [.bytea(hash)])
        }
    }
}

/// Recently seen live keys, by key hash, for `APIKeys.cacheLifetime`.
private final class ScopeCache: Sendable {
    private let entries = Mutex<[[UInt8]: (key: APIKeys.Authorized, until: ContinuousClock.Instant)]>([:])

    func get(_ hash: [UInt8]) -> APIKeys.Authorized? {
        entries.withLock { entries in
            guard let entry = entries[hash], entry.until > .now else { return nil }
            return entry.key
        }
    }

    func set(_ key: APIKeys.Authorized) {
        entries.withLock { entries in
            if entries.count > 10_000 { entries.removeAll() }
            entries[key.hash] = (key, .now + APIKeys.cacheLifetime)
        }
    }
}
