import Foundation
import LedgerAccounts
import LedgerPostgres

/// Attempt counters in the `login_throttle` table, shared by every instance: limits hold across
/// instances, not in one process's memory. Each count is one atomic upsert.
public struct PostgresAttemptCounters: AttemptCounters {
    let client: PostgresClient

    public init(client: PostgresClient) {
        self.client = client
    }

    public func count(_ key: String, window: TimeInterval, now: Date) async throws -> AttemptCount {
        let rows = try await client.query(
            """
            INSERT INTO login_throttle AS t (key, failures, window_started) VALUES ($1, 1, $2)
            ON CONFLICT (key) DO UPDATE SET
                failures = CASE WHEN \(Self.windowOver) THEN 1 ELSE t.failures + 1 END,
                window_started = CASE WHEN \(Self.windowOver) THEN $2 ELSE t.window_started END,
                locked_until = CASE WHEN \(Self.windowOver) THEN NULL ELSE t.locked_until END
            RETURNING failures, window_started, locked_until
            """,
            [.text(key), .timestamp(now), .int(Int64(window))])
        guard let count = try rows[0].int(0), let windowStarted = try rows[0].date(1) else {
            throw PostgresError(.decoding, message: "login_throttle answered no count")
        }
        return AttemptCount(count: Int(count), windowStarted: windowStarted, lockedUntil: try rows[0].date(2))
    }

    /// A key's window is over: its lockout ended, or (never locked) its window ran out.
    private static let windowOver = """
        (t.locked_until IS NOT NULL AND t.locked_until <= $2) \
        OR (t.locked_until IS NULL AND t.window_started <= $2 - make_interval(secs => $3))
        """

    public func lock(_ key: String, reaching limit: Int, for window: TimeInterval, now: Date) async throws -> Date? {
        let rows = try await client.query(
            """
            UPDATE login_throttle SET locked_until = $2::timestamptz + make_interval(secs => $4)
            WHERE key = $1 AND failures >= $3 AND locked_until IS NULL
            RETURNING locked_until
            """,
            [.text(key), .timestamp(now), .int(Int64(limit)), .int(Int64(window))])
        return rows.rowCount == 1 ? try rows[0].date(0) : nil
    }

    public func uncount(_ key: String, inWindowStartedAt windowStarted: Date) async throws {
        try await client.query(
            "UPDATE login_throttle SET failures = greatest(failures - 1, 0) WHERE key = $1 AND window_started = $2",
            [.text(key), .timestamp(windowStarted)])
    }

    public func clear(_ key: String) async throws {
        try await client.query("DELETE FROM login_throttle WHERE key = $1", [.text(key)])
    }
}
