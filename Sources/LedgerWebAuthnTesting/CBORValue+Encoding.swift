import LedgerWebAuthn

extension CBORValue {
    /// The value's encoding, with integers and lengths in their shortest form (RFC 8949 §4.2.1)
    /// and map entries in their stored order: a caller that wants CTAP2's canonical order sorts
    /// the entries before building the map.
    public var encoded: [UInt8] {
        var output: [UInt8] = []
        encode(into: &output)
        return output
    }

    /// Appends the encoding to `output`.
    public func encode(into output: inout [UInt8]) {
        switch self {
        case .unsigned(let value):
            Self.appendHead(major: 0, argument: value, to: &output)
        case .negative(let value):
            Self.appendHead(major: 1, argument: value, to: &output)
        case .bytes(let value):
            Self.appendHead(major: 2, argument: UInt64(value.count), to: &output)
            output.append(contentsOf: value)
        case .text(let value):
            Self.appendHead(major: 3, argument: UInt64(value.utf8.count), to: &output)
            output.append(contentsOf: value.utf8)
        case .array(let elements):
            Self.appendHead(major: 4, argument: UInt64(elements.count), to: &output)
            for element in elements { element.encode(into: &output) }
        case .map(let entries):
            Self.appendHead(major: 5, argument: UInt64(entries.count), to: &output)
            for (key, value) in entries {
                key.encode(into: &output)
                value.encode(into: &output)
            }
        case .bool(let value):
            output.append(value ? 0xF5 : 0xF4)
        case .null:
            output.append(0xF6)
        case .undefined:
            output.append(0xF7)
        }
    }

    static func appendHead(major: UInt8, argument: UInt64, to output: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case 0..<24:
            output.append(type | UInt8(argument))
        case 24...0xFF:
            output.append(type | 24)
            output.append(UInt8(argument))
        case 0x100...0xFFFF:
            output.append(type | 25)
            appendBigEndian(argument, bytes: 2, to: &output)
        case 0x1_0000...0xFFFF_FFFF:
            output.append(type | 26)
            appendBigEndian(argument, bytes: 4, to: &output)
        default:
            output.append(type | 27)
            appendBigEndian(argument, bytes: 8, to: &output)
        }
    }

    private static func appendBigEndian(_ value: UInt64, bytes: Int, to output: inout [UInt8]) {
        for shift in stride(from: (bytes - 1) * 8, through: 0, by: -8) {
            output.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
