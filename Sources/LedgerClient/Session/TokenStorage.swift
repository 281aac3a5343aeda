/// Where a `LedgerSession` keeps its tokens between launches: the Keychain on Apple platforms
/// (`KeychainTokenStorage`), memory in tests and on servers (`MemoryTokenStorage`).
public protocol TokenStorage: Sendable {
    /// The tokens saved last, or nil when signed out.
    func load() async throws -> SessionTokens?
    /// Replaces what is kept; nil forgets it (sign-out, a session that ended).
    func save(_ tokens: SessionTokens?) async throws
}
