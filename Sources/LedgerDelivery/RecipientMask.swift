import Foundation

/// Recipients as `ledger deliveries list` and the logs show them: enough for an operator to
/// tell two apart, too little to read an address or number off.
public enum RecipientMask {
    /// `a•••@example.com` for an address, `+9955•••300` for a number, `•••` for anything else.
    public static func mask(_ recipient: String) -> String {
        if let at = recipient.lastIndex(of: "@"), at != recipient.startIndex {
            return String(recipient[..<at].prefix(1)) + "•••" + String(recipient[at...])
        }
        let digits = recipient.filter(\.isNumber)
        guard digits.count >= 8 else { return "•••" }
        return (recipient.hasPrefix("+") ? "+" : "") + String(digits.prefix(4)) + "•••" + String(digits.suffix(3))
    }

    /// `text` with every address and phone number in it masked: a relay's error text often
    /// quotes the recipient.
    public static func maskingRecipients(in text: String) -> String {
        var result = text
        for pattern in [#"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"#, #"\+?[0-9][0-9 ()\-]{7,}[0-9]"#] {
            guard let expression = try? NSRegularExpression(pattern: pattern) else { continue }
            let matches = expression.matches(in: result, range: NSRange(result.startIndex..., in: result)).reversed()
            for match in matches {
                guard let range = Range(match.range, in: result) else { continue }
                result.replaceSubrange(range, with: mask(String(result[range])))
            }
        }
        return result
    }
}
