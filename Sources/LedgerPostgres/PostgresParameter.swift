import Foundation
import LedgerCore

/// A value bound to a `$n` placeholder. Values are always bound, never spliced into SQL.
public enum PostgresParameter: Sendable, Hashable {
    case null
    case text(String)
    case int(Int64)
    case bool(Bool)
    case uuid(UUID)
    /// Sent in binary (no hex round trip).
    case bytea([UInt8])
    /// Microsecond precision, sent as text in UTC.
    case timestamp(Date)
    /// A value already in PostgreSQL's binary format for the type `typeOID` (such as an array
    /// built by hand for `unnest`).
    case binary(typeOID: UInt32, bytes: [UInt8])

    /// The parameter's type OID for PQprepare: bytea must be declared for binary transfer; the
    /// rest are sent as text and typed by the server from context.
    var typeOID: UInt32 {
        switch self {
        case .bytea: return 17
        case .binary(let typeOID, _): return typeOID
        default: return 0
        }
    }

    var isBinary: Bool {
        switch self {
        case .bytea, .binary: return true
        default: return false
        }
    }

    /// The bytes sent to the server; nil for SQL NULL.
    var wireBytes: [UInt8]? {
        switch self {
        case .null: return nil
        case .text(let value): return Array(value.utf8)
        case .int(let value): return Array(String(value).utf8)
        case .bool(let value): return value ? [UInt8(ascii: "t")] : [UInt8(ascii: "f")]
        case .uuid(let value): return Array(value.lowercased.utf8)
        case .bytea(let value): return value
        case .timestamp(let value): return Array(PostgresTimestamp.format(value).utf8)
        case .binary(_, let bytes): return bytes
        }
    }
}

extension PostgresParameter: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(nilLiteral: ()) { self = .null }
}

extension PostgresParameter {
    /// A `uuid[]` in the array's text form (cast it: `$1::uuid[]`).
    public static func uuidArray(_ ids: some Sequence<UUID>) -> PostgresParameter {
        .text(PostgresArray.literal(ids.map(\.lowercased)))
    }

    /// A `text[]` in the array's text form, each element quoted (cast it: `$1::text[]`).
    public static func textArray(_ elements: some Sequence<String>) -> PostgresParameter {
        .text(PostgresArray.literal(Array(elements), quoted: true))
    }
}
