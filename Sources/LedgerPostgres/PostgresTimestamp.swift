import Foundation

/// Conversions between `Date` and PostgreSQL's `timestamptz` text form, at microsecond precision.
public enum PostgresTimestamp {
    /// Microseconds since the Unix epoch, rounded to the nearest microsecond.
    public static func micros(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    public static func date(micros: Int64) -> Date {
        Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00`, which the server parses exactly.
    public static func format(_ date: Date) -> String {
        let total = micros(date)
        var seconds = total / 1_000_000
        var fraction = total % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00",
            parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, fraction)
    }
}
