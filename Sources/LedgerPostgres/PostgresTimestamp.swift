import Foundation
import LedgerCore

/// Conversions between `Date` and PostgreSQL's `timestamptz` text form, at microsecond precision.
public enum PostgresTimestamp {
    /// Microseconds since the Unix epoch, rounded to the nearest microsecond.
    public static func micros(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// Microseconds since 2000-01-01 UTC: `timestamptz` in PostgreSQL's binary format.
    public static func binaryMicros(_ date: Date) -> Int64 {
        micros(date) - postgresEpochOffsetMicros
    }

    /// The Unix time of PostgreSQL's epoch, 2000-01-01 UTC, in microseconds.
    static let postgresEpochOffsetMicros: Int64 = 946_684_800 * 1_000_000

    public static func date(micros: Int64) -> Date {
        Date(timeIntervalSince1970: Double(micros) / 1_000_000)
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00`, which the server parses exactly.
    public static func format(_ date: Date) -> String {
        let time = UTCTime(date)
        return time.dateAndTime(separator: " ") + "." + time.microsecondDigits + "+00"
    }
}
