import Foundation

/// What a relay or provider said about a failure, made safe to log and to keep for
/// `ledger deliveries list --failed`: a hostile or misconfigured endpoint (a base URL that echoes
/// the request's headers, say) must not put the service's credentials there, nor forge a log
/// line or a terminal escape with the text it answers.
public enum ProviderErrorText {
    /// The longest text kept, in characters.
    public static let maximumLength = 300

    /// `text` with each of `secrets` (four characters or more) removed, credentials in every
    /// form redacted (`Basic …`, `Bearer …`, an `Authorization:` header, `token=…`-style
    /// fields, a URL's user and password), control characters and line breaks turned into
    /// spaces, format characters (bidi overrides) dropped, and at most `maximumLength`
    /// characters kept.
    public static func sanitized(_ text: String, secrets: [String] = []) -> String {
        var cleaned = singleLine(text)
        for secret in secrets where secret.count >= 4 {
            cleaned = cleaned.replacingOccurrences(of: secret, with: "<redacted>")
        }
        for (pattern, replacement) in credentialPatterns {
            cleaned = cleaned.replacing(pattern) { match in "\(match.output.1)\(replacement)" }
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
    /// Made per call: only failures come here, and `Regex` is not `Sendable`.
    private static var credentialPatterns: [(Regex<(Substring, Substring)>, String)] {
        [
            // An authorization scheme and its credentials: `Basic QUMxMjM6…`, `Bearer eyJ…`.
            (try! Regex(#"(?i)(\b(?:basic|bearer|digest|negotiate)\s+)[A-Za-z0-9._~+/=\-]{6,}"#), "<redacted>"),
            // A header or field that carries a secret, whatever its value's form.
            (
                try! Regex(
                    #"(?i)(\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?)[^"'\s,;&]+(?:\s+[^"'\s,;&]+)?"#),
                "<redacted>"
            ),
            (
                try! Regex(
                    #"(?i)(\b(?:auth[_-]?token|access[_-]?token|refresh[_-]?token|api[_-]?key|client[_-]?secret|password|secret)["']?\s*[:=]\s*["']?)[^"'\s,;&]+"#
                ),
                "<redacted>"
            ),
            // A URL's user information: `https://user:password@host`.
            (try! Regex(#"(?i)([a-z][a-z0-9+.\-]*://)[^/\s@]+@"#), "<redacted>@"),
        ]
    }
}
