/// Lower-case hexadecimal encoding and decoding of bytes.
public enum Hex {
    /// The lower-case digit of a nibble (0...15).
    @inline(__always)
    static func lowercaseDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }

    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let encoded = bytes.withContiguousStorageIfAvailable(encode(contiguous:)) { return encoded }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        out.appendLowercaseHex(bytes)
        return String(decoding: out, as: UTF8.self)
    }

    /// The tight loop of `encode`: written straight into the string's storage (an import
    /// encodes several keys a record).
    static func encode(contiguous bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (index, byte) in bytes.enumerated() {
                out[2 * index] = lowercaseDigit(byte >> 4)
                out[2 * index + 1] = lowercaseDigit(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }

    /// Decodes hex digits (either case); nil when the text is not an even run of hex digits.
    public static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        decode(utf8: text.utf8)
    }

    public static func decode(utf8 chars: some Collection<UInt8>) -> [UInt8]? {
        if let decoded = chars.withContiguousStorageIfAvailable({ decode(utf8: $0) }) { return decoded }
        return Array(chars).withUnsafeBufferPointer { decode(utf8: $0) }
    }

    /// The tight loop of `decode`: `bytea` cells in text format (hex) come through here.
    public static func decode(utf8 chars: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard chars.count % 2 == 0 else { return nil }
        let count = chars.count / 2
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                guard let high = nibble(chars[2 * index]), let low = nibble(chars[2 * index + 1]) else {
                    valid = false
                    break
                }
                buffer[index] = high << 4 | low
                initialized = index + 1
            }
        }
        return valid ? out : nil
    }

    @inline(__always)
    static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
