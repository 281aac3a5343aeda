import Foundation
import HTTPTypes
import Hummingbird
import LedgerAccounts
import LedgerCore
import LedgerEvents
import Synchronization

/// Checks a service call's `Authorization: Bearer <api_key>`: `401 invalid_api_key` for a
/// missing, wrong or revoked key, `403 insufficient_scope` for a key without the scope, and
/// `429 rate_limited` past the key's rate on this instance.
public struct APIKeyGuard: Sendable {
    let keys: any APIKeyAuthority
    let limiter: TokenBucketLimiter?

    /// - Parameter requestsPerSecond: per key and instance; 0 means unlimited.
    public init(keys: any APIKeyAuthority, requestsPerSecond: Int) {
        self.keys = keys
        self.limiter =
            requestsPerSecond > 0
            ? TokenBucketLimiter(rate: Double(requestsPerSecond), burst: Double(2 * requestsPerSecond)) : nil
    }

    /// Runs `body` for the key's service: the events it causes name `service:<key id>` as
    /// their actor.
    public func acting<Result: Sendable>(
        _ request: Request, scope: APIKeyScope, _ body: (AuthorizedKey) async throws -> Result
    ) async throws -> Result {
        let key = try await authorize(request, scope: scope)
        var metadata = EventMetadata.current
        metadata.actor = "service:\(key.id.lowercased)"
        return try await EventMetadata.$current.withValue(metadata) { try await body(key) }
    }

    @discardableResult
    public func authorize(_ request: Request, scope: APIKeyScope) async throws -> AuthorizedKey {
        guard let presented = request.bearerCredential else {
            throw APIError(.unauthorized, .init("invalid_api_key"), "An API key is required.", headers: [.wwwAuthenticate: "Bearer"])
        }
        let key: AuthorizedKey
        do {
            key = try await keys.authorize(presented, scope: scope)
        } catch APIKeyError.unknown {
            throw APIError(.unauthorized, .init("invalid_api_key"), "The API key is not valid.", headers: [.wwwAuthenticate: "Bearer"])
        } catch APIKeyError.missingScope {
            throw APIError(.forbidden, .init("insufficient_scope"), "The API key lacks the \(scope.rawValue) scope.")
        }
        // Counted after the key is known good, so wrong keys cannot exhaust a real key's budget.
        if let limiter, let wait = limiter.take(key.hash) {
            let retryAfter = max(1, Int(wait.rounded(.up)))
            throw APIError(
                .tooManyRequests, .init("rate_limited"), "Too many requests for this API key. Slow down.",
                extra: ["retry_after": .int(Int64(retryAfter))], headers: [.retryAfter: String(retryAfter)])
        }
        return key
    }
}

/// Token buckets by key: `rate` tokens a second up to `burst`; one token a call.
public final class TokenBucketLimiter: Sendable {
    private let rate: Double
    private let burst: Double
    private let buckets = Mutex<[[UInt8]: (tokens: Double, updated: ContinuousClock.Instant)]>([:])

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
    }

    /// Takes a token at `now`; nil when there was one, else the seconds until there will be.
    public func take(_ key: [UInt8], now: ContinuousClock.Instant = .now) -> Double? {
        buckets.withLock { buckets in
            var bucket = buckets[key] ?? (burst, now)
            let elapsed = bucket.updated.duration(to: now)
            let seconds = elapsed.inSeconds
            bucket.tokens = min(burst, bucket.tokens + seconds * rate)
            bucket.updated = now
            defer {
                if buckets.count > 10_000 { buckets.removeAll() }
                buckets[key] = bucket
            }
            guard bucket.tokens >= 1 else { return (1 - bucket.tokens) / rate }
            bucket.tokens -= 1
            return nil
        }
    }
}
