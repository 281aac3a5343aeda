import Foundation

/// A date split into UTC calendar fields and microseconds, for the text timestamp formats
/// (PostgreSQL's and RFC 3339).
public struct UTCTime: Sendable {
    public let year, month, day, hour, minute, second: Int
    /// 0 ..< 1,000,000.
    public let microsecond: Int64

    /// Rounds to the nearest microsecond.
    public init(_ date: Date) {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
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

    /// `YYYY-MM-DD<separator>HH:MM:SS`.
    public func dateAndTime(separator: String) -> String {
        String(format: "%04d-%02d-%02d%@%02d:%02d:%02d", year, month, day, separator, hour, minute, second)
    }
}
