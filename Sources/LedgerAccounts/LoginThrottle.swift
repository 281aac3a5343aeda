import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity
import LedgerPostgres

/// Counts sign-in attempts per key in PostgreSQL, before the password is checked, and locks
/// the key out after too many failures.
public struct LoginThrottle: Sendable {
    public struct Policy: Sendable {
        /// Failures allowed; the next attempt is refused until the lockout ends.
        public var maximumFailures: Int
        /// How long a lockout lasts, and the window failures are counted in.
        public var lockout: TimeInterval

        /// Failures allowed from one client address (all accounts together) per `addressWindow`.
        public var maximumFailuresPerAddress: Int
        public var addressWindow: TimeInterval

        public init(
            maximumFailures: Int = Policies.standard.loginMaxFailures, lockout: TimeInterval = Policies.standard.loginLockout,
            maximumFailuresPerAddress: Int = Policies.standard.ipLoginFailureLimit,
            addressWindow: TimeInterval = Policies.standard.limitWindow
        ) {
            self.maximumFailures = maximumFailures
            self.lockout = lockout
            self.maximumFailuresPerAddress = maximumFailuresPerAddress
            self.addressWindow = addressWindow
        }
    }

    let client: PostgresClient
    public let policy: Policy

    public init(client: PostgresClient, policy: Policy) {
        self.client = client
        self.policy = policy
    }

    /// A counter of attempts: an email's sign-ins, an account's password re-auths, or a client
    /// address's (all accounts together).
    public struct Key: Sendable, Hashable {
        public let name: String
        /// Attempts admitted in one window; past them every attempt is refused until the
        /// lockout (or the window) ends.
        let limit: Int
        let window: TimeInterval
        /// A success clears the key (an account's own failures); an address's key only does
        /// not count the success.
        let clearsOnSuccess: Bool
    }

    /// The key for an email's sign-ins; the address itself is never stored.
    public func key(email normalized: String) -> Key {
        Key(name: Self.keyName(email: normalized), limit: policy.maximumFailures, window: policy.lockout, clearsOnSuccess: true)
    }

    /// The key for an account's password re-auths.
    public func key(reauthOf accountID: UUID) -> Key {
        Key(name: Self.keyName(reauthOf: accountID), limit: policy.maximumFailures, window: policy.lockout, clearsOnSuccess: true)
    }

    static func keyName(email normalized: String) -> String { "email:" + Hex.encode(SHA256.hash(Array(normalized.utf8))) }
    static func keyName(reauthOf accountID: UUID) -> String { "reauth:" + accountID.lowercased }

    /// Every counter row named after one person: their email's sign-ins (an unsalted hash of
    /// the address), their password re-auths, their account's lookups. A purge deletes them.
    public static func rowKeys(email: String?, accountID: UUID) -> [String] {
        var keys = [keyName(reauthOf: accountID), RequestLimits.accountKey(accountID)]
        if let email { keys.append(keyName(email: EmailAddress.normalize(email))) }
        return keys
    }

    /// The key for a client (an IPv4 address or an IPv6 /64).
    public func key(address: String) -> Key {
        Key(name: "ip:" + address, limit: policy.maximumFailuresPerAddress, window: policy.addressWindow, clearsOnSuccess: false)
    }

    /// Attempts admitted under every key they count against, before the password is checked.
    public struct Admission: Sendable {
        public let keys: [Key]
        /// The attempt's number in the first key's window (the account's, where there is one).
        public let attempt: Int
    }

    /// Counts one attempt against each key, atomically across instances and before any
    /// password is hashed, so concurrent guesses cannot all pass the check before the first
    /// failure is written: of any number racing, at most `limit` are admitted. Throws
    /// `TooManyAttempts` (and counts nothing) when a key is spent; settle an admission with
    /// `succeeded` or `failed`.
    public func admit(_ keys: [Key], now: Date) async throws -> Admission {
        var admitted: [Key] = []
        var attempt = 0
        for key in keys {
            let rows = try await client.query(
                """
                INSERT INTO login_throttle AS t (key, failures, window_started) VALUES ($1, 1, $2)
                ON CONFLICT (key) DO UPDATE SET
                    failures = CASE WHEN \(Self.windowOver) THEN 1 ELSE t.failures + 1 END,
                    window_started = CASE WHEN \(Self.windowOver) THEN $2 ELSE t.window_started END,
                    locked_until = CASE WHEN \(Self.windowOver) THEN NULL ELSE t.locked_until END
                RETURNING failures, window_started, locked_until
                """,
                [.text(key.name), .timestamp(now), .int(Int64(key.window))])
            guard let count = try rows[0].int(0), let windowStarted = try rows[0].date(1) else {
                throw PostgresError(.decoding, message: "login_throttle answered no count")
            }
            if count > key.limit {
                try await release(admitted)
                try await release([key])
                let until = try rows[0].date(2) ?? windowStarted.addingTimeInterval(key.window)
                throw TooManyAttempts(retryAfter: secondsUntil(until, from: now))
            }
            if admitted.isEmpty { attempt = Int(count) }
            admitted.append(key)
        }
        return Admission(keys: admitted, attempt: attempt)
    }

    /// A key's window is over: its lockout ended, or (never locked) its window ran out.
    private static let windowOver = """
        (t.locked_until IS NOT NULL AND t.locked_until <= $2) \
        OR (t.locked_until IS NULL AND t.window_started <= $2 - make_interval(secs => $3))
        """

    /// The right password: the account's failures are forgotten, the address's count of
    /// failures does not keep this attempt.
    public func succeeded(_ admission: Admission) async throws {
        for key in admission.keys where key.clearsOnSuccess {
            try await client.query("DELETE FROM login_throttle WHERE key = $1", [.text(key.name)])
        }
        try await release(admission.keys.filter { !$0.clearsOnSuccess })
    }

    /// A wrong password: the attempt stays counted, and a key that reached its limit is locked
    /// for its window from now. Returns the first key's lockout end when this failure set it.
    @discardableResult
    public func failed(_ admission: Admission, now: Date) async throws -> Date? {
        var firstLockout: Date?
        for (index, key) in admission.keys.enumerated() {
            let rows = try await client.query(
                """
                UPDATE login_throttle SET locked_until = $2::timestamptz + make_interval(secs => $4)
                WHERE key = $1 AND failures >= $3 AND locked_until IS NULL
                RETURNING locked_until
                """,
                [.text(key.name), .timestamp(now), .int(Int64(key.limit)), .int(Int64(key.window))])
            if index == 0, rows.rowCount == 1 { firstLockout = try rows[0].date(0) }
        }
        return firstLockout
    }

    /// Takes back attempts that were counted but not made.
    private func release(_ keys: [Key]) async throws {
        for key in keys {
            try await client.query(
                "UPDATE login_throttle SET failures = greatest(failures - 1, 0) WHERE key = $1", [.text(key.name)])
        }
    }
}

/// Too many failed attempts: try again after `retryAfter` seconds.
public struct TooManyAttempts: Error, Sendable, Equatable {
    public let retryAfter: Int
}
