import Foundation
import LedgerCore
import LedgerCrypto
import LedgerIdentity

/// Counts sign-in attempts per key (in the shared `AttemptCounters`), before the password is
/// checked, and locks the key out after too many failures.
public struct LoginThrottle: Sendable {
    let counters: any AttemptCounters
    /// The limits: `loginMaxFailures` per `loginLockout` per email and per account's re-auths,
    /// `ipLoginFailureLimit` per `limitWindow` per client, `mfaDailyFailureLimit` per
    /// `mfaDailyFailureWindow` per account's second factors.
    public let policies: Policies

    public init(counters: any AttemptCounters, policies: Policies) {
        self.counters = counters
        self.policies = policies
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
        /// False for a key that only counts: past its limit it is locked (and the lockout
        /// reported) but refuses nothing itself.
        var refusesPastLimit = true
    }

    /// The key for an email's sign-ins; the address itself is never stored.
    public func key(email normalized: String) -> Key {
        Key(name: Self.keyName(email: normalized), limit: policies.loginMaxFailures, window: policies.loginLockout, clearsOnSuccess: true)
    }

    /// The key for an account's password re-auths.
    public func key(reauthOf accountID: UUID) -> Key {
        Key(name: Self.keyName(reauthOf: accountID), limit: policies.loginMaxFailures, window: policies.loginLockout, clearsOnSuccess: true)
    }

    /// The key for an account's wrong TOTP codes at sign-in over a day. A success does not clear
    /// it: it caps what a guesser who holds the password gets, however often the owner signs in.
    public func key(secondFactorOf accountID: UUID) -> Key {
        secondFactorDay(Self.keyName(secondFactorOf: accountID))
    }

    /// The same day, for the account's wrong recovery codes at sign-in: they spend it (past it,
    /// TOTP codes are refused and the owner told) but are never refused by it, so a guesser who
    /// holds the password cannot close the owner's last way in.
    public func key(recoveryCodesOf accountID: UUID) -> Key {
        var key = key(secondFactorOf: accountID)
        key.refusesPastLimit = false
        return key
    }

    /// The key for one session's wrong TOTP re-auths over a day (no person's name: a session id).
    public func key(secondFactorOfSession sessionID: UUID) -> Key {
        secondFactorDay("mfa-session:" + sessionID.lowercased)
    }

    /// The key for one session's failed passkey re-auths. Not the account's: an assertion cannot
    /// be guessed, so counting it against the account would only let a stolen session lock the
    /// owner's password re-auth (a session id names no person).
    public func key(passkeyReauthOfSession sessionID: UUID) -> Key {
        Key(
            name: "passkey-reauth:" + sessionID.lowercased, limit: policies.loginMaxFailures, window: policies.loginLockout,
            clearsOnSuccess: true)
    }

    private func secondFactorDay(_ name: String) -> Key {
        Key(name: name, limit: policies.mfaDailyFailureLimit, window: policies.mfaDailyFailureWindow, clearsOnSuccess: false)
    }

    static func keyName(email normalized: String) -> String { "email:" + Hex.encode(SHA256.hash(Array(normalized.utf8))) }
    static func keyName(reauthOf accountID: UUID) -> String { "reauth:" + accountID.lowercased }
    static func keyName(secondFactorOf accountID: UUID) -> String { "mfa:" + accountID.lowercased }

    /// Every counter row named after one person: their email's sign-ins (an unsalted hash of
    /// the address), their password re-auths, their wrong second factors, their account's
    /// lookups, their picture uploads. A purge deletes them.
    public static func rowKeys(email: String?, accountID: UUID) -> [String] {
        var keys = [
            keyName(reauthOf: accountID), keyName(secondFactorOf: accountID), RequestLimits.accountKey(accountID),
            RequestLimits.avatarKey(accountID),
        ]
        if let email { keys.append(keyName(email: EmailAddress.normalize(email))) }
        return keys
    }

    /// The key for a client (an IPv4 address or an IPv6 /64).
    public func key(address: String) -> Key {
        Key(name: "ip:" + address, limit: policies.ipLoginFailureLimit, window: policies.limitWindow, clearsOnSuccess: false)
    }

    /// Attempts admitted under every key they count against, before the password is checked.
    public struct Admission: Sendable {
        public let keys: [Key]
        /// The attempt's number in the first key's window (the account's, where there is one).
        public let attempt: Int
        /// When the window each key's count went into started: a count taken back goes back to
        /// that window only, never to one begun since.
        let windows: [Date]
    }

    /// Counts one attempt against each key, atomically across instances and before any
    /// password is hashed, so concurrent guesses cannot all pass the check before the first
    /// failure is written: of any number racing, at most `limit` are admitted. Throws
    /// `TooManyAttempts` (and counts nothing) when a key is spent; settle an admission with
    /// `succeeded` or `failed`.
    public func admit(_ keys: [Key], now: Date) async throws -> Admission {
        var admitted: [Key] = []
        var windows: [Date] = []
        var attempt = 0
        for key in keys {
            let counted = try await counters.count(key.name, window: key.window, now: now)
            if counted.count > key.limit && key.refusesPastLimit {
                try await release(zip(admitted + [key], windows + [counted.windowStarted]))
                let until = counted.lockedUntil ?? counted.windowStarted.addingTimeInterval(key.window)
                throw TooManyAttempts(retryAfter: secondsUntil(until, from: now))
            }
            if admitted.isEmpty { attempt = counted.count }
            admitted.append(key)
            windows.append(counted.windowStarted)
        }
        return Admission(keys: admitted, attempt: attempt, windows: windows)
    }

    /// The right password: the account's failures are forgotten, the address's count of
    /// failures does not keep this attempt.
    public func succeeded(_ admission: Admission) async throws {
        for key in admission.keys where key.clearsOnSuccess {
            try await counters.clear(key.name)
        }
        try await release(zip(admission.keys, admission.windows).filter { !$0.0.clearsOnSuccess })
    }

    /// A wrong password: the attempt stays counted, and a key that reached its limit is locked
    /// for its window from now. Returns the lockouts this failure set, by key: of any number of
    /// failures racing, one alone sets a key's lockout.
    @discardableResult
    public func failed(_ admission: Admission, now: Date) async throws -> [Key: Date] {
        var lockouts: [Key: Date] = [:]
        for key in admission.keys {
            lockouts[key] = try await counters.lock(key.name, reaching: key.limit, for: key.window, now: now)
        }
        return lockouts
    }

    /// Takes back attempts that were counted but not made, each from the window it went into.
    private func release(_ counted: some Sequence<(Key, Date)>) async throws {
        for (key, window) in counted {
            try await counters.uncount(key.name, inWindowStartedAt: window)
        }
    }
}

/// Too many failed attempts: try again after `retryAfter` seconds.
public struct TooManyAttempts: Error, Sendable, Equatable {
    public let retryAfter: Int
}
