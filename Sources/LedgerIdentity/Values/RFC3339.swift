import Foundation
import LedgerCore

/// RFC 3339 timestamps in UTC to the second: `2026-11-22T03:46:16Z`, what every generated client
/// decodes by default (docs/api.md "Conventions"). Hand-written, since every event payload holds a few
/// and Foundation's formatters cost a few hundred microseconds each (ICU) — the fold of an
/// account's stream used to be dominated by them. `parse` still reads fractions: events stored
/// before the service wrote whole seconds keep theirs.
public enum RFC3339 {
    /// UTC, truncated to the second (a fraction is dropped, never rounded up).
    public static func format(_ date: Date) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(20)
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
        output.append(UInt8(ascii: "Z"))
    }

    /// The last instant of the second `date` falls in, as `format` shows it: a query for the
    /// state "at" a shown time covers everything recorded within that second
    /// (`2026-12-06T08:54:25Z` includes an event recorded at 08:54:25.75).
    public static func endOfSecond(_ date: Date) -> Date {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let second = (micros / 1_000_000).rounded(.down)
        return Date(timeIntervalSince1970: second + 0.999_999)
    }

    /// Reads `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (`t`/`z` and a space separator too);
    /// fractions beyond microseconds are truncated. Nil for anything else.
    public static func parse(_ text: String) -> Date? {
        // Every stored event has timestamps, so this reads the text's bytes in place.
        if let parsed = text.utf8.withContiguousStorageIfAvailable({ parse(utf8: $0) }) { return parsed }
        return Array(text.utf8).withUnsafeBufferPointer { parse(utf8: $0) }
    }

    static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var index = 0
        func number(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for position in index..<index + count {
                let byte = bytes[position]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += count
            return value
        }
        func expect(_ accepted: UInt8, _ alternative: UInt8? = nil, _ another: UInt8? = nil) -> Bool {
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            guard byte == accepted || byte == alternative || byte == another else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")),
            let day = number(2), expect(UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")),
            let hour = number(2), expect(UInt8(ascii: ":")), let minute = number(2), expect(UInt8(ascii: ":")),
            let second = number(2),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var micros = 0
        if expect(UInt8(ascii: ".")) {
            var digits = 0
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                if digits < 6 { micros = micros * 10 + Int(bytes[index] - 48) }
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 6) { micros *= 10 }
        }
        var offset = 0
        if expect(UInt8(ascii: "Z"), UInt8(ascii: "z")) {
            offset = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index]
            index += 1
            guard let hours = number(2), expect(UInt8(ascii: ":")), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offset = (hours * 3600 + minutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
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
