import Foundation
import LedgerCore
import LedgerCrypto
import LedgerPostgres

/// Counts failed sign-ins per key in PostgreSQL and locks the key out after too many; also
/// counts email availability checks, which would otherwise let one account test addresses
/// by the thousand.
public struct LoginThrottle: Sendable {
    public struct Policy: Sendable {
        /// Failures allowed; the next attempt is refused until the lockout ends.
        public var maximumFailures: Int
        /// How long a lockout lasts, and the window failures are counted in.
        public var lockout: TimeInterval

        /// Failures allowed from one client address (all accounts together) per `addressWindow`.
        public var maximumFailuresPerAddress: Int
        public var addressWindow: TimeInterval

        /// `GET /auth/email-available` checks allowed to one account per `emailCheckWindow`: the
        /// app checks as the user types (debounced), so a person needs a handful.
        public var maximumEmailChecks: Int
        public var emailCheckWindow: TimeInterval

        public init(
            maximumFailures: Int = 5, lockout: TimeInterval = 900, maximumFailuresPerAddress: Int = 50,
            addressWindow: TimeInterval = 900, maximumEmailChecks: Int = 30, emailCheckWindow: TimeInterval = 900
        ) {
            self.maximumFailures = maximumFailures
            self.lockout = lockout
            self.maximumFailuresPerAddress = maximumFailuresPerAddress
            self.addressWindow = addressWindow
            self.maximumEmailChecks = maximumEmailChecks
            self.emailCheckWindow = emailCheckWindow
        }
    }

    let client: PostgresClient
    public let policy: Policy

    public init(client: PostgresClient, policy: Policy) {
        self.client = client
        self.policy = policy
    }

    /// The key for an email; the address itself is never stored.
    public static func key(email normalized: String) -> String {
        "email:" + Hex.encode(SHA256.hash(Array(normalized.utf8)))
    }

    /// When the key is locked out at `now`, the time it is free again.
    public func lockedUntil(_ key: String, now: Date) async throws -> Date? {
        let rows = try await client.query(
            "SELECT locked_until FROM login_throttle WHERE key = $1 AND locked_until > $2", [.text(key), .timestamp(now)])
        return rows.rowCount == 0 ? nil : try rows[0].date(0)
    }

    /// The key for a client address.
    public static func key(address: String) -> String {
        "ip:" + address
    }

    /// Records a failure atomically (any number of instances); returns the lockout end when
    /// this failure reached the limit (`maximumFailures` per `lockout`, or for address keys
    /// `maximumFailuresPerAddress` per `addressWindow`).
    public func recordFailure(_ key: String, now: Date) async throws -> Date? {
        let isAddress = key.hasPrefix("ip:")
        let limit = isAddress ? policy.maximumFailuresPerAddress : policy.maximumFailures
        let window = isAddress ? policy.addressWindow : policy.lockout
        guard try await count(key, window: window, now: now).count >= limit else { return nil }
        let until = now.addingTimeInterval(window)
        try await client.query(
            "UPDATE login_throttle SET locked_until = $2 WHERE key = $1", [.text(key), .timestamp(until)])
        return until
    }

    /// Counts an email availability check by `accountID`; when it is one too many for the
    /// window, the time checks are allowed again (and the check must not run).
    public func recordEmailCheck(accountID: UUID, now: Date) async throws -> Date? {
        let (checks, windowStarted) = try await count("email-check:" + accountID.lowercased, window: policy.emailCheckWindow, now: now)
        return checks > policy.maximumEmailChecks ? windowStarted.addingTimeInterval(policy.emailCheckWindow) : nil
    }

    /// Adds one to the key's count in its fixed window (a new window once `window` seconds have
    /// passed since the last began), atomically across instances; returns the count and when
    /// the window began.
    private func count(_ key: String, window: TimeInterval, now: Date) async throws -> (count: Int, windowStarted: Date) {
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
        return (Int(count), windowStarted)
    }

    public func reset(_ key: String) async throws {
        try await client.query("DELETE FROM login_throttle WHERE key = $1", [.text(key)])
    }
}

/// Too many failed attempts: try again after `retryAfter` seconds.
public struct TooManyAttempts: Error, Sendable, Equatable {
    public let retryAfter: Int
}
