import Foundation

/// Readers for cells of a binary-format result (`PostgresConnection.queryBinary`).
/// Each returns nil for NULL and throws when the cell has the wrong size for its type.
extension PostgresRow {
    /// `int8`, `xid8` (as its bit pattern), `int4`, `int2`.
    public func binaryInteger(_ column: Int) throws -> Int64? {
        try result.withCell(index, column) { cell -> Int64 in
            switch cell.count {
            case 8: return Int64(bitPattern: Self.bigEndian(cell))
            case 4: return Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: Self.bigEndian(cell))))
            case 2: return Int64(Int16(bitPattern: UInt16(truncatingIfNeeded: Self.bigEndian(cell))))
            default: throw binaryError(column, "an integer")
            }
        }
    }

    /// `xid8`.
    public func binaryUnsigned(_ column: Int) throws -> UInt64? {
        try result.withCell(index, column) { cell -> UInt64 in
            guard cell.count == 8 else { throw binaryError(column, "a 64-bit value") }
            return Self.bigEndian(cell)
        }
    }

    public func binaryUUID(_ column: Int) throws -> UUID? {
        try result.withCell(index, column) { cell -> UUID in
            guard cell.count == 16 else { throw binaryError(column, "a uuid") }
            return UUID(
                uuid: (
                    cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7],
                    cell[8], cell[9], cell[10], cell[11], cell[12], cell[13], cell[14], cell[15]
                ))
        }
    }

    /// `bytea` (raw bytes).
    public func binaryBytes(_ column: Int) -> [UInt8]? {
        result.withCell(index, column) { Array($0) }
    }

    /// `text`, `varchar`, or anything cast `::text`.
    public func binaryText(_ column: Int) -> String? {
        result.withCell(index, column) { String(decoding: $0, as: UTF8.self) }
    }

    /// `timestamptz`: microseconds since 2000-01-01 UTC on the wire.
    public func binaryDate(_ column: Int) throws -> Date? {
        try binaryInteger(column).map { PostgresTimestamp.date(micros: $0 + PostgresTimestamp.postgresEpochOffsetMicros) }
    }

    static func bigEndian(_ cell: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        for byte in cell { value = value << 8 | UInt64(byte) }
        return value
    }

    private func binaryError(_ column: Int, _ expected: String) -> PostgresError {
        PostgresError(.decoding, message: "column \(result.columnName(column)) is not \(expected) in binary format")
    }
}
