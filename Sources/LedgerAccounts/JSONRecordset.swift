import Foundation
import LedgerCore
import LedgerIdentity
import LedgerPostgres

/// Rows for `json_to_recordset($1::json)`, written straight into bytes: a rebuild sends
/// hundreds of thousands of rows, and `JSONEncoder` cost more than the inserts themselves.
struct JSONRecordset {
    private var bytes: [UInt8] = [UInt8(ascii: "[")]
    private var firstField = true
    private(set) var count = 0

    /// One row; `body` writes its fields.
    mutating func row(_ body: (inout JSONRecordset) -> Void) {
        if count > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "{"))
        firstField = true
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        count += 1
    }

    private mutating func name(_ name: StaticString) {
        if !firstField { bytes.append(UInt8(ascii: ",")) }
        firstField = false
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        bytes.append(contentsOf: "\":".utf8)
    }

    mutating func field(_ name: StaticString, _ value: String?) {
        self.name(name)
        guard let value else { return bytes.append(contentsOf: "null".utf8) }
        JSONObjectFilter.appendString(value, to: &bytes)
    }

    mutating func field(_ name: StaticString, _ value: UUID?) {
        self.name(name)
        guard let value else { return bytes.append(contentsOf: "null".utf8) }
        bytes.append(UInt8(ascii: "\""))
        value.appendLowercased(to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func field(_ name: StaticString, _ value: Int64) {
        self.name(name)
        bytes.appendDecimal(value)
    }

    mutating func field(_ name: StaticString, _ value: Bool) {
        self.name(name)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// RFC 3339 with microseconds, which PostgreSQL reads exactly.
    mutating func field(_ name: StaticString, _ value: Date?) {
        self.name(name)
        guard let value else { return bytes.append(contentsOf: "null".utf8) }
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    var parameter: PostgresParameter {
        var text = bytes
        text.append(UInt8(ascii: "]"))
        return .text(String(decoding: text, as: UTF8.self))
    }
}

/// A row that writes its own fields, named as the recordset's columns.
protocol RecordsetRow {
    func write(to row: inout JSONRecordset)
}
