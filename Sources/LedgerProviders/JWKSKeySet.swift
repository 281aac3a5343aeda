import AsyncHTTPClient
import Foundation
import JWTKit
import LedgerCore

/// One provider's signing keys, read from a JWKS URL or file and kept until a token names a
/// key id it does not hold; then it is read again, but never more than once a minute (a flood
/// of made-up key ids must not become a flood of requests to the provider).
actor JWKSKeySet {
    let source: String
    let clock: any LedgerClock
    static let refreshInterval: TimeInterval = 60
    private var keys = JWTKeyCollection()
    private var keyIDs: Set<String> = []
    private var lastFetch: Date?

    init(source: String, clock: any LedgerClock) {
        self.source = source
        self.clock = clock
    }

    /// The keys, when they hold `keyID` (after a refresh if that is allowed now).
    func keys(holding keyID: String) async throws -> JWTKeyCollection? {
        if keyIDs.contains(keyID) { return keys }
        let now = clock.now()
        if let lastFetch, now.timeIntervalSince(lastFetch) < Self.refreshInterval { return nil }
        lastFetch = now
        let jwks = try JSONDecoder().decode(JWKS.self, from: try await fetch())
        let collection = JWTKeyCollection()
        try await collection.add(jwks: jwks)
        keys = collection
        keyIDs = Set(jwks.keys.compactMap { $0.keyIdentifier?.string })
        return keyIDs.contains(keyID) ? keys : nil
    }

    private func fetch() async throws -> Data {
        guard source.hasPrefix("https://") || source.hasPrefix("http://") else {
            let path = source.hasPrefix("file://") ? String(source.dropFirst(7)) : source
            return try Data(contentsOf: URL(fileURLWithPath: path))
        }
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: source), timeout: .seconds(10))
        guard response.status == .ok else { throw InvalidJWKS("\(source) answered \(response.status.code)") }
        var body = try await response.body.collect(upTo: 1 << 20)
        return Data(body.readBytes(length: body.readableBytes) ?? [])
    }
}

struct InvalidJWKS: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
