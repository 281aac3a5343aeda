import Foundation

/// What a relay or provider said about a failure, made safe to log and to keep for
/// `ledger deliveries list --failed`: a hostile or misconfigured endpoint (a base URL that echoes
/// the request's headers, say) must not put the service's credentials there, nor forge a log
/// line or a terminal escape with the text it answers.
public enum ProviderErrorText {
    /// The longest text kept, in characters.
    public static let maximumLength = 300
    /// The most of a text read at all: the patterns' cost grows with it, and nothing past it is kept.
    static let maximumInput = 4096

    /// `text` with each of `secrets` (four characters or more, in any case) removed, credentials
    /// in every form redacted (`Basic …`, `Bearer …`, `AUTH PLAIN …`, an `Authorization:`
    /// header, `token=`, `password:`, `cookie:`-style fields whatever their value's quoting, a
    /// URL's user and password; percent-encoded ones too), control characters and line breaks
    /// turned into spaces, format characters (bidi overrides) dropped, and at most
    /// `maximumLength` characters kept. Redaction comes before the cut, so no secret is kept
    /// in part.
    public static func sanitized(_ text: String, secrets: [String] = []) -> String {
        var cleaned = singleLine(String(text.prefix(maximumInput)))
        // A percent-encoded credential (`Authorization%3A%20Basic%20…`) is read decoded.
        if cleaned.contains("%"), let decoded = cleaned.removingPercentEncoding { cleaned = singleLine(decoded) }
        for secret in secrets where secret.count >= 4 {
            cleaned = cleaned.replacingOccurrences(of: secret, with: "<redacted>", options: .caseInsensitive)
        }
        for (pattern, template) in credentialPatterns {
            cleaned = pattern.stringByReplacingMatches(
                in: cleaned, range: NSRange(cleaned.startIndex..., in: cleaned), withTemplate: template)
        }
        return cleaned.count > maximumLength ? String(cleaned.prefix(maximumLength)) + "…" : cleaned
    }

    /// `text` as one line: every control character (CR, LF, ESC, C1 controls) and line or
    /// paragraph separator a space, format characters gone.
    public static func singleLine(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: result.append(" ")
            case .format: continue
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    /// Each pattern keeps its first capture (what names the credential) and replaces the rest.
    /// None starts a match but at a boundary it names (ICU's lookbehind), so each is one pass
    /// over the text. Made per call: only failures come here.
    private static var credentialPatterns: [(NSRegularExpression, String)] {
        // A value: quoted (escapes inside kept whole), or up to the next separator.
        let value = #"(?:"(?:[^"\\]|\\.)*"?|'[^']*'?|[^\s"',;&]+)"#
        let patterns = [
            // An authorization scheme and its credentials: `Basic QUMxMjM6…`, `Bearer eyJ…`, SMTP `AUTH PLAIN …`.
            (#"(?i)(\b(?:basic|bearer|digest|negotiate|auth\s+(?:plain|login|xoauth2))\s+)[A-Za-z0-9._~+/=\-]{4,}"#, "$1<redacted>"),
            // A header that carries one, whatever its scheme.
            (#"(?i)(\b(?:proxy-)?authorization["']?\s*[:=]\s*)"# + value + #"(?:\s+[^"'\s,;&]+)?"#, "$1<redacted>"),
            // A field whose name ends in a secret's name: `token=`, `oauth_token=`, `"client_secret":`, `Cookie:`.
            (
                #"(?i)((?<![A-Za-z0-9_.\-])[A-Za-z0-9_.\-]*(?:token|password|passwd|secret|api[_-]?key|apikey|cookie|session|signature)["']?\s*[:=]\s*)"#
                    + value, "$1<redacted>"
            ),
            // A URL's user information: `https://user:password@host`, up to the authority's last `@`.
            (#"(?i)((?<![A-Za-z0-9+.\-])[a-z][a-z0-9+.\-]*://)[^/\s?#]*@"#, "$1<redacted>@"),
        ]
        return patterns.map { (try! NSRegularExpression(pattern: $0.0), $0.1) }
    }
}
