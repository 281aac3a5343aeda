import Foundation
import LedgerCore

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
        let time = UTCTime(date)
        return time.dateAndTime(separator: " ") + "." + time.microsecondDigits + "+00"
    }
}
