import Foundation
import LedgerCore
import LedgerIdentity

/// docs/architecture.md "Abuse limits": sign-ups and reset requests per client, and every answer that can
/// tell whether an email or number is registered, per client and per signed-in account. Each
/// is counted before the work it protects (the lookup, the hash), so a refused request costs
/// one upsert and tells nothing.
public struct RequestLimits: Sendable {
    public struct Policy: Sendable {
        /// Sign-ups and password-reset requests per client per `window` (`LEDGER_IP_SIGNUP_LIMIT`).
        public var signupsPerClient: Int
        /// Lookups per client, and per signed-in account, per `window` (`LEDGER_IP_LOOKUP_LIMIT`).
        public var lookupsPerClient: Int
        public var window: TimeInterval

        public init(
            signupsPerClient: Int = Policies.standard.ipSignupLimit, lookupsPerClient: Int = Policies.standard.ipLookupLimit,
            window: TimeInterval = Policies.standard.limitWindow
        ) {
            self.signupsPerClient = signupsPerClient
            self.lookupsPerClient = lookupsPerClient
            self.window = window
        }
    }

    /// What a request is about to do.
    public enum Work: Sendable {
        /// A sign-up or a reset request: a hash or an email, and a lookup.
        case signup
        /// Only a lookup.
        case lookup
        /// A call to a provider's token endpoint (a sign-in's `authorization_code`): counted
        /// against the sign-up budget's number, on its own counter.
        case tokenExchange
    }

    let counters: any AttemptCounters
    public let policy: Policy

    public init(counters: any AttemptCounters, policy: Policy = Policy()) {
        self.counters = counters
        self.policy = policy
    }

    /// The counter of one signed-in account's lookups.
    static func accountKey(_ accountID: UUID) -> String { "lookup-account:" + accountID.lowercased }

    /// Counts the request against its client (an IPv4 address or an IPv6 /64; nil when
    /// unknown) and its account (when signed in); throws `rate_limited` with the wait when any
    /// count is past its limit.
    public func admit(_ work: Work, client: String?, accountID: UUID?, now: Date) async throws {
        var counts: [(key: String, limit: Int)] = []
        switch (work, client) {
        case (.tokenExchange, let client?):
            counts.append(("exchange:" + client, policy.signupsPerClient))
        case (.tokenExchange, nil):
            break
        case (_, let client?):
            if work == .signup { counts.append(("signup:" + client, policy.signupsPerClient)) }
            counts.append(("lookup:" + client, policy.lookupsPerClient))
        case (_, nil):
            break
        }
        if let accountID, work != .tokenExchange { counts.append((Self.accountKey(accountID), policy.lookupsPerClient)) }
        var refusedUntil: Date?
        for (key, limit) in counts {
            // These keys are never locked, so each window is a fixed one from its first request.
            let counted = try await counters.count(key, window: policy.window, now: now)
            let windowEnds = counted.windowStarted.addingTimeInterval(policy.window)
            if counted.count > limit { refusedUntil = max(refusedUntil ?? windowEnds, windowEnds) }
        }
        if let refusedUntil {
            throw IdentityError(.rateLimited, "Too many requests. Try again later.", retryAfter: secondsUntil(refusedUntil, from: now))
        }
    }
}
