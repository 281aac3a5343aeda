import CLibPQ
import Foundation
import LedgerCore

/// The rows of one statement, read in PostgreSQL's text format.
///
/// Owns the libpq result and frees it when released. Accessors read cells lazily, so a large
/// page costs no per-row allocation beyond what the caller decodes.
public final class PostgresResult: @unchecked Sendable {
    let handle: OpaquePointer?

    init(handle: OpaquePointer?) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    public var rowCount: Int { Int(PQntuples(handle)) }
    public var columnCount: Int { Int(PQnfields(handle)) }

    /// Rows affected by an INSERT, UPDATE or DELETE.
    public var affectedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    public func columnName(_ column: Int) -> String {
        String(cString: PQfname(handle, Int32(column)))
    }

    public func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// The rows, for convenient iteration.
    public var rows: [PostgresRow] {
        (0..<rowCount).map { PostgresRow(result: self, index: $0) }
    }

    public subscript(row: Int) -> PostgresRow {
        PostgresRow(result: self, index: row)
    }

    /// The raw text bytes of a cell; nil for NULL.
    func withCell<T>(_ row: Int, _ column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T? {
        guard column < columnCount, row < rowCount else { return nil }
        if PQgetisnull(handle, Int32(row), Int32(column)) == 1 { return nil }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        guard let value = PQgetvalue(handle, Int32(row), Int32(column)) else { return nil }
        return try value.withMemoryRebound(to: UInt8.self, capacity: length) {
            try body(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}

/// One row of a `PostgresResult`; typed accessors return nil for NULL and throw on a value of the wrong form.
public struct PostgresRow: Sendable {
    let result: PostgresResult
    public let index: Int

    public func isNull(_ column: Int) -> Bool { result.isNull(index, column) }

    public func string(_ column: Int) -> String? {
        result.withCell(index, column) { String(decoding: $0, as: UTF8.self) }
    }

    public func int(_ column: Int) throws -> Int64? {
        try result.withCell(index, column) { bytes -> Int64 in
            guard let value = Self.parseInt(bytes) else { throw decodingError(column, "an integer") }
            return value
        }
    }

    public func bool(_ column: Int) throws -> Bool? {
        try result.withCell(index, column) { bytes -> Bool in
            guard bytes.count == 1 else { throw decodingError(column, "a boolean") }
            return bytes[0] == UInt8(ascii: "t")
        }
    }

    public func uuid(_ column: Int) throws -> UUID? {
        try result.withCell(index, column) { bytes -> UUID in
            guard let value = UUID(utf8: bytes) else {
                throw decodingError(column, "a uuid")
            }
            return value
        }
    }

    /// A `bytea` cell in hex output format (`\x…`).
    public func bytes(_ column: Int) throws -> [UInt8]? {
        try result.withCell(index, column) { cell -> [UInt8] in
            guard cell.count >= 2, cell[0] == UInt8(ascii: "\\"), cell[1] == UInt8(ascii: "x"),
                let decoded = Hex.decode(utf8: UnsafeBufferPointer(rebasing: cell[2...]))
            else { throw decodingError(column, "bytea in hex format") }
            return decoded
        }
    }

    /// A `timestamptz` cell, read in the UTC session time zone every pooled connection sets.
    public func date(_ column: Int) throws -> Date? {
        try result.withCell(index, column) { cell -> Date in
            guard let value = Self.parseTimestamp(cell) else { throw decodingError(column, "a UTC timestamp") }
            return value
        }
    }

    private func decodingError(_ column: Int, _ expected: String) -> PostgresError {
        PostgresError(.decoding, message: "column \(result.columnName(column)) is not \(expected)")
    }

    static func parseInt(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard !bytes.isEmpty else { return nil }
        var value: Int64 = 0
        var negative = false
        var index = 0
        if bytes[0] == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        guard index < bytes.count else { return nil }
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int64(digit))
            guard !o1, !o2 else { return nil }
            value = sum
            index += 1
        }
        return negative ? -value : value
    }

    /// Parses `YYYY-MM-DD HH:MM:SS[.ffffff]+00`.
    static func parseTimestamp(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= bytes.count else { return nil }
            var value = 0
            for index in range {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int(digit)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var index = 19
        var micros = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var digits = 0
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 {
                if digits < 6 {
                    micros = micros * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                    digits += 1
                }
                index += 1
            }
            while digits < 6 {
                micros *= 10
                digits += 1
            }
        }
        guard bytes.count >= index + 3, bytes[index] == UInt8(ascii: "+"), number(index + 1..<index + 3) == 0
        else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = Int64(timegm(&parts))
        return PostgresTimestamp.date(micros: seconds * 1_000_000 + Int64(micros))
    }
}
