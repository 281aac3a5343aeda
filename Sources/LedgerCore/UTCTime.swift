import Foundation

/// A date split into UTC calendar fields and microseconds, for the text timestamp formats
/// (PostgreSQL's and RFC 3339).
public struct UTCTime: Sendable {
    public let year, month, day, hour, minute, second: Int
    /// 0 ..< 1,000,000.
    public let microsecond: Int64

    /// Rounds to the nearest microsecond.
    public init(_ date: Date) {
        // Kept to years 1 through 9999 (what the formats hold), so no date, however far off or
        // not finite (an imported record's), overflows the conversion below.
        let interval = date.timeIntervalSince1970
        let bounded = interval.isNaN ? 0 : min(max(interval, -62_135_596_800), 253_402_300_799)
        let micros = Int64((bounded * 1_000_000).rounded())
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 {
            fraction += 1_000_000
            seconds -= 1
        }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        year = Int(parts.tm_year) + 1900
        month = Int(parts.tm_mon) + 1
        day = Int(parts.tm_mday)
        hour = Int(parts.tm_hour)
        minute = Int(parts.tm_min)
        second = Int(parts.tm_sec)
        microsecond = fraction
    }

    /// `YYYY-MM-DD<separator>HH:MM:SS`. Built by hand: `String(format:)` goes through
    /// CoreFoundation and shows up in profiles, and every bound timestamp passes here.
    public func dateAndTime(separator: String) -> String {
        var text = ""
        text.reserveCapacity(19 + separator.utf8.count)
        Self.append(year, width: 4, to: &text)
        text += "-"
        Self.append(month, width: 2, to: &text)
        text += "-"
        Self.append(day, width: 2, to: &text)
        text += separator
        Self.append(hour, width: 2, to: &text)
        text += ":"
        Self.append(minute, width: 2, to: &text)
        text += ":"
        Self.append(second, width: 2, to: &text)
        return text
    }

    /// The microseconds as six digits.
    public var microsecondDigits: String {
        var text = ""
        Self.append(Int(microsecond), width: 6, to: &text)
        return text
    }

    static func append(_ value: Int, width: Int, to text: inout String) {
        let digits = String(value)
        if digits.count < width { text += String(repeating: "0", count: width - digits.count) }
        text += digits
    }
}
