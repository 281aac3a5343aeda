/// What a log line may hold of a field: one line, nothing a terminal acts on.
enum LogEscaping {
    /// `text` with control characters written as escapes: `\n`, `\r`, `\t`, and `\u{1B}` for
    /// ESC and every other C0 or C1 control, DEL and a line or paragraph separator. Text
    /// without any (nearly every field) is returned as it is, after one scan of its bytes.
    static func escaped(_ text: String) -> String {
        // C0 controls and DEL are single bytes; C1 controls begin with 0xC2, U+2028 and U+2029 with 0xE2.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029:
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
