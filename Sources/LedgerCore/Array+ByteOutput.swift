/// Writing text straight into a byte buffer, for the renderers that run once per event (the
/// feed, its stream, webhooks): no intermediate `String`s.
extension Array where Element == UInt8 {
    /// The decimal digits of `value`, zero-padded on the left to `width` digits.
    public mutating func appendDecimal(_ value: Int64, width: Int = 1) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude, width: width)
    }

    public mutating func appendDecimal(_ value: UInt64, width: Int = 1) {
        var digitCount = 1
        var probe = value
        while probe >= 10 {
            probe /= 10
            digitCount += 1
        }
        let start = count
        let total = Swift.max(width, digitCount)
        append(contentsOf: repeatElement(UInt8(ascii: "0"), count: total))
        var rest = value
        var index = start + total - 1
        while rest > 0 {
            self[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
    }

    /// Two lower-case hex digits per byte.
    public mutating func appendLowercaseHex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes {
            append(Hex.lowercaseDigits[Int(byte >> 4)])
            append(Hex.lowercaseDigits[Int(byte & 0x0F)])
        }
    }
}
