extension CBORValue {
    /// The integer, when it is one and fits an `Int64`.
    public var integerValue: Int64? {
        switch self {
        case .unsigned(let value): return value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): return value <= UInt64(Int64.max) ? -1 - Int64(value) : nil
        default: return nil
        }
    }

    /// An integer value: `.unsigned` from 0 up, `.negative` below.
    public static func integer(_ value: Int64) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    public var bytesValue: [UInt8]? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    public var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The entries, when this is a map.
    public var mapEntries: [(CBORValue, CBORValue)]? {
        if case .map(let entries) = self { return entries }
        return nil
    }

    /// The value of `key` in a map (nil for a missing key or another type).
    public subscript(key: CBORValue) -> CBORValue? {
        mapEntries?.first { $0.0 == key }?.1
    }

    /// The value of the text key `key` in a map.
    public subscript(key: String) -> CBORValue? {
        self[.text(key)]
    }

    /// The value of the integer key `key` in a map (COSE labels).
    public subscript(label: Int64) -> CBORValue? {
        self[.integer(label)]
    }
}
