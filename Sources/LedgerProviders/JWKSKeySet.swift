import AsyncHTTPClient
import Foundation
import JWTKit
import LedgerCore

/// One provider's signing keys, read from a JWKS URL or file and kept for as long as the
/// answer's `Cache-Control: max-age` says (an hour when it says nothing, a file included, and
/// never more than a day), so a key the provider removes stops verifying once that time is up.
/// A token naming a key id the set does not hold reads it again early, but never more than once
/// a minute: a flood of made-up key ids must not become a flood of requests to the provider.
/// An actor, so concurrent verifications wait for one read rather than each starting one.
actor JWKSKeySet {
    let source: String
    let clock: any LedgerClock
    static let refreshInterval: TimeInterval = 60
    static let defaultMaxAge: TimeInterval = 3600
    static let longestMaxAge: TimeInterval = 86_400
    private var keys = JWTKeyCollection()
    private var keyIDs: Set<String> = []
    private var lastFetch: Date?
    private var expiresAt: Date?
    private var refreshing: Task<Void, any Error>?

    init(source: String, clock: any LedgerClock) {
        self.source = source
        self.clock = clock
    }

    /// The keys, when they hold `keyID`: read again first when they are past their age, or do
    /// not hold it, and the last read is a minute old. Callers arriving during a read wait for it.
    func keys(holding keyID: String) async throws -> JWTKeyCollection? {
        if let refreshing {
            _ = try? await refreshing.value
            return usableKeys(holding: keyID)
        }
        if let usable = usableKeys(holding: keyID) { return usable }
        // Within a minute of the last read nothing is read again, and keys past their age
        // (a failed read forgot them) verify nothing.
        let now = clock.now()
        if let lastFetch, now.timeIntervalSince(lastFetch) < Self.refreshInterval { return nil }
        lastFetch = now
        let read = Task { try await self.refresh(now: now) }
        refreshing = read
        defer { refreshing = nil }
        try await read.value
        return usableKeys(holding: keyID)
    }

    /// The keys when they are within their age and hold `keyID`.
    private func usableKeys(holding keyID: String) -> JWTKeyCollection? {
        guard let expiresAt, clock.now() < expiresAt, keyIDs.contains(keyID) else { return nil }
        return keys
    }

    private func refresh(now: Date) async throws {
        let fresh = expiresAt.map { now < $0 } ?? false
        do {
            let document = try await fetch()
            let jwks = try JSONDecoder().decode(JWKS.self, from: document.body)
            let collection = JWTKeyCollection()
            try await collection.add(jwks: jwks)
            keys = collection
            keyIDs = Set(jwks.keys.compactMap { $0.keyIdentifier?.string })
            // Kept at least as long as a read may not be repeated, so a `no-store` answer
            // still verifies for that minute.
            let maxAge = min(document.maxAge ?? Self.defaultMaxAge, Self.longestMaxAge)
            expiresAt = now.addingTimeInterval(max(maxAge, Self.refreshInterval))
        } catch {
            // Keys past their age are not kept on when they cannot be confirmed: a failed
            // read and an answer that does not parse alike.
            if !fresh { forget() }
            throw error
        }
    }

    private func forget() {
        keys = JWTKeyCollection()
        keyIDs = []
        expiresAt = nil
    }

    /// The document, and how long it may be kept when the answer says so.
    private func fetch() async throws -> (body: Data, maxAge: TimeInterval?) {
        guard source.hasPrefix("https://") || source.hasPrefix("http://") else {
            let path = source.hasPrefix("file://") ? String(source.dropFirst(7)) : source
            return (try Data(contentsOf: URL(fileURLWithPath: path)), nil)
        }
        var request = HTTPClientRequest(url: source)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await HTTPClient.providerKeys.execute(request, timeout: .seconds(10))
        guard response.status == .ok else { throw InvalidJWKS("\(source) answered \(response.status.code)") }
        var body = try await response.body.collect(upTo: 1 << 20)
        let maxAge = Self.maxAge(cacheControl: response.headers["Cache-Control"].joined(separator: ","))
        return (Data(body.readBytes(length: body.readableBytes) ?? []), maxAge)
    }

    /// The seconds a `Cache-Control` value allows keeping the answer: its `max-age`, or 0 for
    /// `no-store` / `no-cache`; nil when it says neither.
    static func maxAge(cacheControl: String) -> TimeInterval? {
        var maxAge: TimeInterval?
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts.first {
            case "no-store", "no-cache": return 0
            case "max-age":
                if parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))), seconds >= 0 {
                    maxAge = TimeInterval(seconds)
                }
            default: continue
            }
        }
        return maxAge
    }
}

struct InvalidJWKS: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
