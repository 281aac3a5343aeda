/// CBOR (RFC 8949) limited to what attestation objects and COSE keys use: unsigned and negative
/// integers (64-bit), byte and text strings, arrays, maps (in their encoded order), and the simple
/// values false, true, null and undefined. Tags and floats have no case: `CBORDecoder` refuses them.
public indirect enum CBORValue: Sendable, Hashable {
    case unsigned(UInt64)
    /// The negative integer `-1 - n` (major type 1), so that -2^64 fits.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Entries in encoded order. A map as decoded never repeats a key.
    case map([(CBORValue, CBORValue)])
    case bool(Bool)
    case null
    case undefined

    public static func == (lhs: CBORValue, rhs: CBORValue) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)): return a == b
        case (.negative(let a), .negative(let b)): return a == b
        case (.bytes(let a), .bytes(let b)): return a == b
        case (.text(let a), .text(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.map(let a), .map(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null), (.undefined, .undefined): return true
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let value):
            hasher.combine(0)
            hasher.combine(value)
        case .negative(let value):
            hasher.combine(1)
            hasher.combine(value)
        case .bytes(let value):
            hasher.combine(2)
            hasher.combine(value)
        case .text(let value):
            hasher.combine(3)
            hasher.combine(value)
        case .array(let value):
            hasher.combine(4)
            hasher.combine(value)
        case .map(let entries):
            hasher.combine(5)
            hasher.combine(entries.count)
            for (key, value) in entries {
                hasher.combine(key)
                hasher.combine(value)
            }
        case .bool(let value):
            hasher.combine(6)
            hasher.combine(value)
        case .null:
            hasher.combine(7)
        case .undefined:
            hasher.combine(8)
        }
    }
}
