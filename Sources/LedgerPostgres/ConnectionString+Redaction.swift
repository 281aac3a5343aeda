import Foundation

/// Connection strings as errors may show them: libpq quotes a URI it cannot parse whole, with
/// its password, and that message reaches the log and the console.
enum ConnectionString {
    /// `text` with the password of every connection URI (`postgresql://user:secret@…`) and of
    /// every `password=` setting replaced by `***`.
    static func redacted(_ text: String) -> String {
        var result = text
        let patterns: [(String, String)] = [
            (#"(?i)(\b[a-z][a-z0-9+.\-]*://[^:/@\s"]*:)[^@\s"]*@"#, "$1***@"),
            (#"(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s"&]+)"#, "$1***"),
        ]
        for (pattern, template) in patterns {
            guard let expression = try? NSRegularExpression(pattern: pattern) else { continue }
            result = expression.stringByReplacingMatches(
                in: result, range: NSRange(result.startIndex..., in: result), withTemplate: template)
        }
        return result
    }
}
