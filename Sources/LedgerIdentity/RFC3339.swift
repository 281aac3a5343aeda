import Foundation
import LedgerCore

/// RFC 3339 timestamps with microseconds: `2026-11-22T03:46:16.123456Z`. Hand-written, since
/// every event payload holds a few and Foundation's formatters cost a few hundred
/// microseconds each (ICU) — the fold of an account's stream used to be dominated by them.
public enum RFC3339 {
    /// UTC, with microseconds when there are any.
    public static func format(_ date: Date) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(27)
        append(date, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends `format(date)` to `output`.
    public static func append(_ date: Date, to output: inout [UInt8]) {
        let time = UTCTime(date)
        output.appendDecimal(Int64(time.year), width: 4)
        output.append(UInt8(ascii: "-"))
        output.appendDecimal(Int64(time.month), width: 2)
        output.append(UInt8(ascii: "-"))
        output.appendDecimal(Int64(time.day), width: 2)
        output.append(UInt8(ascii: "T"))
        output.appendDecimal(Int64(time.hour), width: 2)
        output.append(UInt8(ascii: ":"))
        output.appendDecimal(Int64(time.minute), width: 2)
        output.append(UInt8(ascii: ":"))
        output.appendDecimal(Int64(time.second), width: 2)
        if time.microsecond != 0 {
            output.append(UInt8(ascii: "."))
            output.appendDecimal(time.microsecond, width: 6)
        }
        output.append(UInt8(ascii: "Z"))
    }

    /// Reads `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (`t`/`z` and a space separator too);
    /// fractions beyond microseconds are truncated. Nil for anything else.
    public static func parse(_ text: String) -> Date? {
        var bytes = Array(text.utf8)[...]
        func number(_ count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            var value = 0
            for byte in bytes.prefix(count) {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            bytes = bytes.dropFirst(count)
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard let first = bytes.first, characters.utf8.contains(first) else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt "),
              let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var micros = 0
        if expect(".") {
            var digits = 0
            while let byte = bytes.first, byte >= 48, byte <= 57 {
                if digits < 6 { micros = micros * 10 + Int(byte - 48) }
                digits += 1
                bytes = bytes.dropFirst()
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        var offset = 0
        if expect("Zz") {
            offset = 0
        } else if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            bytes = bytes.dropFirst()
            guard let hours = number(2), expect(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        guard bytes.isEmpty else { return nil }
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
