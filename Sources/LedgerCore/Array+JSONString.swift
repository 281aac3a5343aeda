extension Array where Element == UInt8 {
    /// Appends `text` as a JSON string literal: quotes, backslashes and control characters
    /// escaped (the short forms where JSON has them), everything else as its UTF-8.
    public mutating func appendJSONString(_ text: String) {
        append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var clean = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
                appendEscaped(byte)
                clean = index + 1
            }
            append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean...]))
        }
        append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(byte)
        case 0x08: append(UInt8(ascii: "b"))
        case 0x09: append(UInt8(ascii: "t"))
        case 0x0A: append(UInt8(ascii: "n"))
        case 0x0C: append(UInt8(ascii: "f"))
        case 0x0D: append(UInt8(ascii: "r"))
        default:
            append(literal: "u00")
            append(Hex.lowercaseDigit(byte >> 4))
            append(Hex.lowercaseDigit(byte & 0xF))
        }
    }
}
