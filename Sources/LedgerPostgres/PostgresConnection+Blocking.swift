extension PostgresConnection {
    /// Runs `body` on one of the blocking executor's threads, where it may send statements with
    /// `queryBlocking` and wait on the socket in place.
    ///
    /// For a loop of statements on one connection (the group-commit flusher): each statement
    /// then costs the round trip and nothing more, where `query` hands every result from the
    /// readiness thread back to a task. `body` has the connection to itself; statements
    /// queued with `queue` must have been sent before.
    public func withBlockingThread<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        precondition(!hasQueuedStatements, "queued statements would be skipped by queryBlocking")
        return try await executor.run { try body(self) }
    }

    /// The blocking form of `query`, only for the thread `withBlockingThread` runs its body on.
    @discardableResult
    public func queryBlocking(_ sql: String, _ parameters: [PostgresParameter] = []) throws -> PostgresResult {
        try executeSync(sql, parameters)
    }
}
