import Foundation
import LedgerAccounts
import LedgerServer

/// Access tokens (docs/api.md "Access tokens that other services verify"):
/// `LEDGER_ACCESS_TOKEN_FORMAT`, `LEDGER_ISSUER`, `LEDGER_TOKEN_AUDIENCE`,
/// `LEDGER_TOKEN_CLIENT_ID` and `LEDGER_SIGNING_KEY_ACTIVATION_SECONDS`.
extension LedgerConfiguration {
    /// The tokens as configured: `iss` is `LEDGER_ISSUER`, else the origin of `LEDGER_LINK_BASE_URL`.
    public var accessTokens: AccessTokenSettings {
        AccessTokenSettings(
            format: accessTokenFormat, issuer: tokenIssuer ?? Self.origin(of: linkBaseURL) ?? linkBaseURL, audience: tokenAudience,
            clientID: tokenClientID)
    }

    /// The scheme, host and port of `url` (a path is not part of an origin).
    static func origin(of url: String) -> String? {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, let host = parsed.host else { return nil }
        return scheme + "://" + host + (parsed.port.map { ":\($0)" } ?? "")
    }

    mutating func readAccessTokens(
        string: (String) -> String?, integer: (String, inout Int, Int, Int) throws -> Void
    ) throws {
        if let format = string("LEDGER_ACCESS_TOKEN_FORMAT") {
            guard let parsed = AccessTokenSettings.Format(rawValue: format) else {
                throw ConfigurationError("LEDGER_ACCESS_TOKEN_FORMAT must be opaque or jwt, got '\(format)'")
            }
            accessTokenFormat = parsed
        }
        if let issuer = string("LEDGER_ISSUER") {
            guard let url = URL(string: issuer), ["https", "http"].contains(url.scheme), url.host != nil else {
                throw ConfigurationError("LEDGER_ISSUER must be an http(s) URL, got '\(issuer)'")
            }
            tokenIssuer = issuer
        }
        tokenAudience = string("LEDGER_TOKEN_AUDIENCE") ?? tokenAudience
        tokenClientID = string("LEDGER_TOKEN_CLIENT_ID") ?? tokenClientID
        try integer("LEDGER_SIGNING_KEY_ACTIVATION_SECONDS", &signingKeyActivationSeconds, 0, 7 * Self.day)
    }
}
