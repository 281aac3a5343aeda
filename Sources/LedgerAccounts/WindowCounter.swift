import Foundation
import LedgerPostgres

/// Fixed-window counters shared by every instance, in PostgreSQL (DESIGN.md §4: limits hold
/// across instances, not in one process's memory). A count is taken with one atomic upsert, so
/// concurrent requests each see their own number.
public struct WindowCounter: Sendable {
    let client: PostgresClient

    public init(client: PostgresClient) {
        self.client = client
    }

    /// One more for `key` in its window (a new window once `window` seconds have passed since
    /// the last began): the count so far, this one included, and when the window ends.
    public func increment(_ key: String, window: TimeInterval, now: Date) async throws -> (count: Int, windowEnds: Date) {
        let rows = try await client.query(
            """
            INSERT INTO login_throttle AS t (key, failures, window_started) VALUES ($1, 1, $2)
            ON CONFLICT (key) DO UPDATE SET
                failures = CASE WHEN t.window_started <= $2 - make_interval(secs => $3) THEN 1 ELSE t.failures + 1 END,
                window_started = CASE WHEN t.window_started <= $2 - make_interval(secs => $3) THEN $2 ELSE t.window_started END,
                locked_until = NULL
            RETURNING failures, window_started
            """,
            [.text(key), .timestamp(now), .int(Int64(window))])
        guard let count = try rows[0].int(0), let windowStarted = try rows[0].date(1) else {
            throw PostgresError(.decoding, message: "login_throttle answered no count")
        }
        return (Int(count), windowStarted.addingTimeInterval(window))
    }
}
