import Foundation
import LedgerCore

/// Rows sent as one array per column in PostgreSQL's binary format, read back as a table by
/// `unnest($1::uuid[], $2::text[], …) AS r(…)`: no JSON or text for the server to parse (which
/// was half of PostgreSQL's time in a rebuild), and no formatting here.
///
/// Every row must write the same fields in the same order; the first row fixes the columns.
public struct BinaryRecordset {
    /// The element types used by projections.
    public enum ColumnType: Sendable {
        case uuid, int8, bool, text, bytea, timestamptz

        public var sqlArrayType: String {
            switch self {
            case .uuid: return "uuid[]"
            case .int8: return "int8[]"
            case .bool: return "bool[]"
            case .text: return "text[]"
            case .bytea: return "bytea[]"
            case .timestamptz: return "timestamptz[]"
            }
        }

        public var elementOID: UInt32 {
            switch self {
            case .uuid: return 2950
            case .int8: return 20
            case .bool: return 16
            case .text: return 25
            case .bytea: return 17
            case .timestamptz: return 1184
            }
        }

        public var arrayOID: UInt32 {
            switch self {
            case .uuid: return 2951
            case .int8: return 1016
            case .bool: return 1000
            case .text: return 1009
            case .bytea: return 1001
            case .timestamptz: return 1185
            }
        }
    }

    private struct Column {
        let name: StaticString
        let type: ColumnType
        /// Each element as a 4-byte big-endian length (-1 for NULL) and its bytes.
        var elements: [UInt8] = []
        var hasNull = false
    }

    private var columns: [Column] = []

    public init() {}

    private var fieldIndex = 0
    public private(set) var count = 0

    /// One row; `body` writes its fields.
    public mutating func row(_ body: (inout BinaryRecordset) -> Void) {
        fieldIndex = 0
        body(&self)
        precondition(fieldIndex == columns.count, "every row of a recordset writes the same fields")
        count += 1
    }

    /// `unnest($1::uuid[], …) AS r(name, …)`, the recordset as a table in a `FROM` clause.
    public var source: String { source(numbered: nil) }

    /// `source` with each row's position (from 1) as one more column, `numbered`.
    public func source(numbered: String?) -> String {
        let arrays = columns.enumerated().map { "$\($0.offset + 1)::\($0.element.type.sqlArrayType)" }
        let names = columns.map { "\($0.name)" } + (numbered.map { [$0] } ?? [])
        let ordinality = numbered == nil ? "" : " WITH ORDINALITY"
        return "unnest(\(arrays.joined(separator: ", ")))\(ordinality) AS r(\(names.joined(separator: ", ")))"
    }

    /// The columns' element types, in `source`'s order.
    public var columnTypes: [ColumnType] { columns.map(\.type) }

    /// The arrays, one parameter per column, in `source`'s order.
    public var parameters: [PostgresParameter] {
        columns.map { column in
            var bytes: [UInt8] = []
            bytes.reserveCapacity(20 + column.elements.count)
            bytes.appendBigEndian(Int32(1))  // dimensions
            bytes.appendBigEndian(Int32(column.hasNull ? 1 : 0))
            bytes.appendBigEndian(column.type.elementOID)
            bytes.appendBigEndian(Int32(count))
            bytes.appendBigEndian(Int32(1))  // lower bound
            bytes.append(contentsOf: column.elements)
            return .binary(typeOID: column.type.arrayOID, bytes: bytes)
        }
    }

    /// The column this field writes to, created by the first row.
    private mutating func nextColumn(_ name: StaticString, _ type: ColumnType) -> Int {
        if count == 0 { columns.append(Column(name: name, type: type)) }
        // Two 8-byte types (int8, timestamptz) swapped would be stored as each other, silently.
        assert(
            fieldIndex < columns.count && "\(columns[fieldIndex].name)" == "\(name)" && columns[fieldIndex].type == type,
            "every row of a recordset writes the same fields in the same order")
        defer { fieldIndex += 1 }
        return fieldIndex
    }

    private mutating func appendNull(_ index: Int) {
        columns[index].elements.appendBigEndian(UInt32(bitPattern: -1))
        columns[index].hasNull = true
    }

    public mutating func field(_ name: StaticString, _ value: UUID?) {
        let index = nextColumn(name, .uuid)
        guard let value else { return appendNull(index) }
        columns[index].elements.appendBigEndian(UInt32(16))
        withUnsafeBytes(of: value.uuid) { columns[index].elements.append(contentsOf: $0) }
    }

    public mutating func field(_ name: StaticString, _ value: Int64) {
        let index = nextColumn(name, .int8)
        columns[index].elements.appendBigEndian(UInt32(8))
        columns[index].elements.appendBigEndian(UInt64(bitPattern: value))
    }

    public mutating func field(_ name: StaticString, _ value: Bool) {
        let index = nextColumn(name, .bool)
        columns[index].elements.appendBigEndian(UInt32(1))
        columns[index].elements.append(value ? 1 : 0)
    }

    public mutating func field(_ name: StaticString, _ value: String?) {
        let index = nextColumn(name, .text)
        guard var value else { return appendNull(index) }
        value.withUTF8 { utf8 in
            columns[index].elements.appendBigEndian(UInt32(utf8.count))
            columns[index].elements.append(contentsOf: utf8)
        }
    }

    /// A `bytea` column from lower-case hex (how states keep token hashes).
    public mutating func field(_ name: StaticString, hex value: String) {
        field(name, bytes: Hex.decode(value))
    }

    public mutating func field(_ name: StaticString, bytes: [UInt8]?) {
        let index = nextColumn(name, .bytea)
        guard let bytes else { return appendNull(index) }
        columns[index].elements.appendBigEndian(UInt32(bytes.count))
        columns[index].elements.append(contentsOf: bytes)
    }

    /// Microseconds since 2000-01-01 UTC, rounded as every other bound timestamp is.
    public mutating func field(_ name: StaticString, _ value: Date?) {
        let index = nextColumn(name, .timestamptz)
        guard let value else { return appendNull(index) }
        columns[index].elements.appendBigEndian(UInt32(8))
        columns[index].elements.appendBigEndian(UInt64(bitPattern: PostgresTimestamp.binaryMicros(value)))
    }
}

/// A row that writes its own fields, named as the recordset's columns.
public protocol RecordsetRow {
    func write(to row: inout BinaryRecordset)
}

extension BinaryRecordset {
    /// The rows as a recordset.
    public init(_ rows: [some RecordsetRow]) {
        self.init()
        for row in rows { self.row(row.write) }
    }
}
