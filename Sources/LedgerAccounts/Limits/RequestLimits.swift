import Foundation
import LedgerCore
import LedgerIdentity

/// docs/architecture.md "Abuse limits": sign-ups and reset requests per client, and every answer that can
/// tell whether an email or number is registered, per client and per signed-in account. Each
/// is counted before the work it protects (the lookup, the hash), so a refused request costs
/// one upsert and tells nothing.
public struct RequestLimits: Sendable {
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
    /// The limits: `ipSignupLimit` and `ipLookupLimit` per `limitWindow`.
    public let policies: Policies

    public init(counters: any AttemptCounters, policies: Policies) {
        self.counters = counters
        self.policies = policies
    }

    /// The counter of one signed-in account's lookups.
    static func accountKey(_ accountID: UUID) -> String { "lookup-account:" + accountID.lowercased }
    /// The counter of one account's picture uploads.
    static func avatarKey(_ accountID: UUID) -> String { "avatar:" + accountID.lowercased }

    /// Counts the request against its client (an IPv4 address or an IPv6 /64; nil when
    /// unknown) and its account (when signed in); throws `rate_limited` with the wait when any
    /// count is past its limit.
    public func admit(_ work: Work, client: String?, accountID: UUID?, now: Date) async throws {
        var counts: [(key: String, limit: Int)] = []
        switch (work, client) {
        case (.tokenExchange, let client?):
            counts.append(("exchange:" + client, policies.ipSignupLimit))
        case (.tokenExchange, nil):
            break
        case (_, let client?):
            if work == .signup { counts.append(("signup:" + client, policies.ipSignupLimit)) }
            counts.append(("lookup:" + client, policies.ipLookupLimit))
        case (_, nil):
            break
        }
        if let accountID, work != .tokenExchange { counts.append((Self.accountKey(accountID), policies.ipLookupLimit)) }
        try await admit(counts, now: now)
    }

    /// Counts a picture upload (`PUT /me/avatar`) against its account
    /// (`Policies.avatarUploadLimit`) and its client (`ipSignupLimit`) before the body is read
    /// or decoded: decoding an image is the costliest work a signed-in caller can ask for.
    public func admitAvatarUpload(accountID: UUID, client: String?, now: Date) async throws {
        try await admit(
            [(Self.avatarKey(accountID), policies.avatarUploadLimit)]
                + (client.map { [("avatar-client:" + $0, policies.ipSignupLimit)] } ?? []),
            now: now)
    }

    /// Counts every key in `limitWindow`; `rate_limited`, with the longest wait, when any is past its limit.
    private func admit(_ counts: [(key: String, limit: Int)], now: Date) async throws {
        var refusedUntil: Date?
        for (key, limit) in counts {
            // These keys are never locked, so each window is a fixed one from its first request.
            let counted = try await counters.count(key, window: policies.limitWindow, now: now)
            let windowEnds = counted.windowStarted.addingTimeInterval(policies.limitWindow)
            if counted.count > limit { refusedUntil = max(refusedUntil ?? windowEnds, windowEnds) }
        }
        if let refusedUntil {
            throw IdentityError(.rateLimited, "Too many requests. Try again later.", retryAfter: secondsUntil(refusedUntil, from: now))
        }
    }

    /// Counts one support read (a search or a look) of `reader` (a key's or a staff member's
    /// counter) before it reads anything; `rate_limited` past `Policies.supportReadLimit` in the window.
    public func admitSupportRead(by reader: String, now: Date) async throws {
        let counted = try await counters.count("support-read:" + reader, window: policies.supportReadWindow, now: now)
        guard counted.count > policies.supportReadLimit else { return }
        let windowEnds = counted.windowStarted.addingTimeInterval(policies.supportReadWindow)
        throw IdentityError(.rateLimited, "Too many lookups. Try again later.", retryAfter: secondsUntil(windowEnds, from: now))
    }
}
