import LedgerCore

extension JSONValue {
    /// Compact JSON with sorted keys, written directly: the hot answers (`/me/auth-methods`,
    /// introspection, errors) are small objects, for which Foundation's `JSONEncoder` cost more
    /// than the database query behind them.
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        append(to: &output)
        return output
    }

    /// Appends the compact JSON of this value to `output`.
    public func append(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(literal: "null")
        case .bool(let value): value ? output.append(literal: "true") : output.append(literal: "false")
        case .int(let value): output.appendDecimal(value)
        case .double(let value): Self.append(value, to: &output)
        case .string(let value): output.appendJSONString(value)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                value.append(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let fields):
            output.append(UInt8(ascii: "{"))
            for (index, key) in fields.keys.sorted().enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                output.appendJSONString(key)
                output.append(UInt8(ascii: ":"))
                fields[key].unsafelyUnwrapped.append(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Whole numbers without a fraction, as `JSONEncoder` writes them; JSON has no NaN or
    /// infinity, so those are `null`.
    private static func append(_ value: Double, to output: inout [UInt8]) {
        guard value.isFinite else { return output.append(literal: "null") }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            output.appendDecimal(Int64(value))
        } else {
            output.append(contentsOf: value.description.utf8)
        }
    }
}
