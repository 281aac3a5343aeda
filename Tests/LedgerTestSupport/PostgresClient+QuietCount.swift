import LedgerPostgres

extension PostgresClient {
    /// The statement count once nothing else has gone through the pool for 300 ms (at most
    /// 10 s): a store NOTIFYs other processes of its commits through the same pool a moment
    /// after them, on its own, and a test counting its own statements starts after that.
    public func quietStatementCount() async throws -> Int {
        var count = statementsSent
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(300))
            let now = statementsSent
            if now == count { break }
            count = now
        }
        return count
    }
}
