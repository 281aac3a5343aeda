/// Writing text straight into a byte buffer, for the renderers that run once per event (the
/// feed, its stream, webhooks): no intermediate `String`s.
extension Array where Element == UInt8 {
    /// The decimal digits of `value`, zero-padded on the left to `width` digits.
    public mutating func appendDecimal(_ value: Int64, width: Int = 1) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude, width: width)
    }

    public mutating func appendDecimal(_ value: UInt64, width: Int = 1) {
        // Digits are written backwards into a stack buffer and copied once: appending a byte
        // at a time pays a capacity and uniqueness check per digit.
        Swift.withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value
            var index = digits.count
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            for _ in 0..<Swift.max(0, width - (digits.count - index)) { append(UInt8(ascii: "0")) }
            append(contentsOf: UnsafeMutableBufferPointer(rebasing: digits[index...]))
        }
    }

    /// Two lower-case hex digits per byte.
    public mutating func appendLowercaseHex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes {
            append(Hex.lowercaseDigit(byte >> 4))
            append(Hex.lowercaseDigit(byte & 0x0F))
        }
    }

    /// Appends a literal's UTF-8 bytes: a `memcpy` from the binary's constant data, with no
    /// lazy global to check (the renderers' fixed parts).
    public mutating func append(literal: StaticString) {
        append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// A fixed-width integer in network byte order (PostgreSQL's binary formats).
    public mutating func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
