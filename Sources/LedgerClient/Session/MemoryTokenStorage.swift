/// Tokens kept in memory only: tests, servers, and apps that sign in on every launch.
public actor MemoryTokenStorage: TokenStorage {
    private var tokens: SessionTokens?
    /// How many times `save` was called (a test reads it to count refreshes kept).
    public private(set) var saves = 0

    /// Storage holding `tokens`.
    public init(_ tokens: SessionTokens? = nil) { self.tokens = tokens }

    public func load() -> SessionTokens? { tokens }

    public func save(_ tokens: SessionTokens?) {
        self.tokens = tokens
        saves += 1
    }
}
