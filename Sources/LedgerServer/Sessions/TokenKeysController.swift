import Foundation
import Hummingbird
import LedgerAccounts

/// `GET /.well-known/jwks.json` and `GET /.well-known/openid-configuration`: the keys that sign
/// JWT access tokens, where any JWT library finds them (docs/api.md "Access tokens that other
/// services verify"). Public by nature: they verify, they cannot sign.
public struct TokenKeysController: Sendable {
    let tokens: JWTAccessTokens?
    let issuer: String

    public init(tokens: JWTAccessTokens?, issuer: String) {
        self.tokens = tokens
        self.issuer = issuer
    }

    /// Caches may keep the key set five minutes: a new key is published ten minutes before it signs.
    static let cacheControl = "public, max-age=300"

    public var endpoints: RouteCollection<LedgerRequestContext> {
        let routes = RouteCollection(context: LedgerRequestContext.self)
        routes.get("/.well-known/jwks.json") { _, _ in
            let keys = try await tokens?.keySet() ?? []
            return try Self.document(["keys": keys])
        }
        routes.get("/.well-known/openid-configuration") { _, _ in
            try Self.document(["issuer": issuer, "jwks_uri": Self.keySetURL(issuer: issuer)])
        }
        return routes
    }

    /// The key set's URL under `issuer` (a trailing slash of the issuer not doubled).
    static func keySetURL(issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/jwks.json"
    }

    /// A `.well-known` document as the link pages serve theirs, cacheable.
    static func document(_ document: Any) throws -> Response {
        var response = try LinkPagesController.json(document)
        response.headers[.cacheControl] = cacheControl
        return response
    }
}
