import Foundation

/// What a service's API key may do (the scopes in openapi.yaml and docs/event-consumers.md).
public enum APIKeyScope: String, Sendable, CaseIterable {
    case eventsRead = "events:read"
    case auditRead = "audit:read"
    case holdsWrite = "holds:write"
    case sessionsIntrospect = "sessions:introspect"
    /// The support desk's everyday work: search, look, sign out everywhere, send a reset link
    /// (docs/support.md). `accounts:admin` includes it.
    case accountsSupport = "accounts:support"
    /// The support desk's heavy changes (two-factor reset, method removal, disable, enable).
    case accountsAdmin = "accounts:admin"
    /// Brings accounts from another system (`POST /admin/accounts/import`).
    case accountsImport = "accounts:import"
    case admin
}

/// A live key that passed authorization.
public struct AuthorizedKey: Sendable, Equatable {
    /// The key's id, which events it causes name as their actor (`service:<id>`).
    public let id: UUID
    /// The key's SHA-256, its identity for per-key accounting such as rate limits.
    public let hash: [UInt8]
    let scopes: Set<String>

    public init(id: UUID, hash: [UInt8], scopes: Set<String>) {
        self.id = id
        self.hash = hash
        self.scopes = scopes
    }

    /// Whether the key holds `scope`, or `admin` (every scope at once); `accounts:admin` holds
    /// `accounts:support` too.
    public func allows(_ scope: APIKeyScope) -> Bool {
        scopes.contains(scope.rawValue) || isAdministrator
            || (scope == .accountsSupport && scopes.contains(APIKeyScope.accountsAdmin.rawValue))
    }

    /// Whether the key holds `admin`, every scope at once.
    public var isAdministrator: Bool { scopes.contains(APIKeyScope.admin.rawValue) }
}

/// A service call's key was refused.
public enum APIKeyError: Error, Sendable {
    case unknown
    case missingScope
}

/// Whether a presented key may make a call of a scope: the HTTP layer asks, the key store
/// (`APIKeys` on PostgreSQL) answers.
public protocol APIKeyAuthority: Sendable {
    /// The key when it is live and holds `scope` (or `admin`); `APIKeyError.unknown` for a wrong
    /// or revoked key, `.missingScope` for a key without the scope.
    func authorize(_ key: String, scope: APIKeyScope) async throws -> AuthorizedKey
}
