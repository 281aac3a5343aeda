/// What a log line may hold of a field: one line, nothing a terminal acts on, and nothing that
/// reads as an escape unless it is one.
enum LogEscaping {
    /// `text` with a backslash written `\\`, and control characters as escapes: `\n`, `\r`,
    /// `\t`, and `\u{1B}` for ESC and every other C0 or C1 control, DEL, a line or paragraph
    /// separator and a bidi control (which could make a line read other than it is). Text
    /// without any (nearly every field) is returned as it is, after one scan of its bytes.
    static func escaped(_ text: String) -> String {
        // C0 controls, DEL and `\` are single bytes; C1 controls begin with 0xC2; the separators
        // and bidi controls (U+200E, U+200F, U+2028–U+202E, U+2066–U+2069) with 0xE2.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0x5C || $0 == 0xC2 || $0 == 0xE2 }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where isEscaped(scalar.value): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isEscaped(_ value: UInt32) -> Bool {
        value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x200E || value == 0x200F || (0x2028...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }
}
